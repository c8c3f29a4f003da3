import Logging
import Synchronization

/// What every connection of one listener shares: an ``AdmissionLedger`` (connections and
/// unauthenticated bytes per peer group, and whom to evict when the total is full) and a way
/// to close each connection it admitted. ``ConnectionGuard`` asks it on every connect and
/// every unauthenticated read; the limits can be replaced by a reload.
final class ConnectionAdmission: Sendable {
    private struct State {
        var ledger: AdmissionLedger
        /// How to close each admitted connection that registered (it hops to the connection's
        /// event loop); removed when the connection leaves.
        var closers: [ConnectionID: @Sendable () -> Void] = [:]
        /// The client a trusted proxy named for each connection (by its channel), for whoever
        /// answers its requests (the console's sign-in throttle).
        var clients: [ObjectIdentifier: String] = [:]
    }

    private let state: Mutex<State>
    let metrics: ServerMetrics
    let logger: Logger

    init(limits: ConnectionLimits, metrics: ServerMetrics, logger: Logger) {
        state = Mutex(State(ledger: AdmissionLedger(limits: limits)))
        self.metrics = metrics
        self.logger = logger
    }

    var limits: ConnectionLimits { state.withLock { $0.ledger.limits } }

    /// Takes effect for the next connect or read of every connection.
    func replace(_ limits: ConnectionLimits) { state.withLock { $0.ledger.limits = limits } }

    /// The group a connection from `address` counts for, and whether the address is a trusted
    /// proxy (then the connection starts in a group of its own, until the proxy names the client).
    func group(of address: IPAddress?) -> (group: PeerGroup?, trusted: Bool) {
        let limits = self.limits
        guard let address else { return (.unknown, false) }
        if limits.trustedProxies.holds(address) { return (nil, true) }
        return (PeerGroup(address, ipv6PrefixLength: limits.ipv6PrefixLength), false)
    }

    /// Counts a new connection of `group` (nil: its own); nil (nothing counted) past
    /// `connections_per_peer`.
    func admit(_ group: PeerGroup?) -> ConnectionID? { state.withLock { $0.ledger.admit(group) } }

    /// How to close `id` when it is evicted. A connection that left already is closed at once.
    func register(_ id: ConnectionID, close: @escaping @Sendable () -> Void) {
        let known = state.withLock { state in
            guard state.ledger.group(of: id) != nil else { return false }
            state.closers[id] = close
            return true
        }
        if !known { close() }
    }

    /// The connection closed: forgets it with what it held. Idempotent.
    func leave(_ id: ConnectionID) {
        state.withLock { state in
            state.ledger.leave(id)
            state.closers[id] = nil
        }
    }

    /// Counts `count` unauthenticated bytes read by `id`; the limit that refuses them, if any
    /// (nothing counted: close it). Connections evicted to make room are told to close.
    func hold(_ count: Int, by id: ConnectionID) -> ConnectionLimit? {
        let (verdict, closers): (AdmissionLedger.Verdict, [@Sendable () -> Void]) = state.withLock { state in
            let verdict = state.ledger.hold(count, by: id)
            guard case .held(let evicting) = verdict else { return (verdict, []) }
            return (verdict, evicting.compactMap { state.closers[$0] })
        }
        // Outside the lock: a closer on this thread closes its connection at once, which leaves.
        for close in closers { close() }
        if case .refused(let limit) = verdict { return limit }
        return nil
    }

    /// `channel`'s connection is `client`'s, as a trusted proxy named it (PROXY header or
    /// `X-Forwarded-For`); nil forgets it (the connection closed).
    func name(_ channel: ObjectIdentifier, client: String?) { state.withLock { $0.clients[channel] = client } }

    /// The client a trusted proxy named for `channel`'s connection, if any: the peer to count a
    /// request's failures for, instead of the proxy.
    func client(of channel: ObjectIdentifier) -> String? { state.withLock { $0.clients[channel] } }

    /// Gives back the bytes `id` holds (it authenticated, or its request was answered).
    func release(_ id: ConnectionID) { state.withLock { $0.ledger.release(id) } }

    /// Counts `id` for `group` from now on; the limit that refuses it (close it) or nil.
    func move(_ id: ConnectionID, to group: PeerGroup) -> ConnectionLimit? { state.withLock { $0.ledger.move(id, to: group) } }

    /// Bytes held now by unauthenticated connections (the `tether_server_unauthenticated_bytes` gauge).
    var unauthenticatedBytes: Int { state.withLock { $0.ledger.held } }

    /// Admitted connections still open (for tests).
    var connectionCount: Int { state.withLock { $0.ledger.connectionCount } }

    /// Counts and logs a connection closed by `limit`; `peer` names the client.
    func closed(_ peer: String, by limit: ConnectionLimit) {
        metrics.limited(limit)
        logger.info("connection from \(peer) closed: \(limit.reason(limits)) ([limits] \(limit.rawValue))", metadata: [
            "peer": "\(peer)", "limit": "\(limit.rawValue)",
        ])
    }
}
