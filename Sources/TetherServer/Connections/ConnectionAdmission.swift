import Logging
import Synchronization

/// What every connection of one listener shares: how many are open per peer address, and the
/// bytes held by connections that have not authenticated yet. ``ConnectionGuard`` asks it on
/// every connect and every unauthenticated read; the limits can be replaced by a reload.
final class ConnectionAdmission: Sendable {
    private struct State {
        var limits: ConnectionLimits
        var peers: [String: Int] = [:]
        var unauthenticatedBytes = 0
    }

    private let state: Mutex<State>
    let metrics: ServerMetrics
    let logger: Logger

    init(limits: ConnectionLimits, metrics: ServerMetrics, logger: Logger) {
        state = Mutex(State(limits: limits))
        self.metrics = metrics
        self.logger = logger
    }

    var limits: ConnectionLimits { state.withLock { $0.limits } }

    /// Takes effect for the next connect or read of every connection.
    func replace(_ limits: ConnectionLimits) { state.withLock { $0.limits = limits } }

    /// Counts a new connection from `peer`; false (nothing counted) past `connections_per_peer`.
    func admit(peer: String) -> Bool {
        state.withLock { state in
            let open = state.peers[peer, default: 0]
            guard open < state.limits.connectionsPerPeer else { return false }
            state.peers[peer] = open + 1
            return true
        }
    }

    func leave(peer: String) {
        state.withLock { state in
            let open = state.peers[peer, default: 0] - 1
            state.peers[peer] = open > 0 ? open : nil
        }
    }

    /// Adds `count` unauthenticated bytes of a connection that already holds `held`; the limit
    /// they pass, if any (then nothing is added).
    func hold(_ count: Int, held: Int) -> ConnectionLimit? {
        state.withLock { state in
            if held + count > state.limits.unauthenticatedBytes { return .unauthenticatedBytes }
            if state.unauthenticatedBytes + count > state.limits.unauthenticatedBytesTotal { return .unauthenticatedBytesTotal }
            state.unauthenticatedBytes += count
            return nil
        }
    }

    /// Gives back bytes a connection held (it authenticated, was answered, or closed).
    func release(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.unauthenticatedBytes -= count }
    }

    /// Bytes held now by unauthenticated connections (the `tether_server_unauthenticated_bytes` gauge).
    var unauthenticatedBytes: Int { state.withLock { $0.unauthenticatedBytes } }

    /// Counts and logs a connection closed by `limit`.
    func closed(_ peer: String, by limit: ConnectionLimit) {
        metrics.limited(limit)
        logger.info("connection from \(peer) closed: \(limit.reason(limits)) ([limits] \(limit.rawValue))", metadata: [
            "peer": "\(peer)", "limit": "\(limit.rawValue)",
        ])
    }
}
