/// The decisions of ``ConnectionAdmission``, without locks or I/O: which connections each peer
/// group has open, the unauthenticated bytes each connection holds, and — when a read would
/// pass `unauthenticated_bytes_total` — whose connections are closed to make room.
///
/// The total is shared max-min fairly: a read is refused when its group would then hold more
/// than `unauthenticated_bytes_per_peer`; when the total is full, the connection holding the
/// most of the group holding the most is evicted (and again, until the read fits), but only a
/// group that holds more than the reader's group would: a peer with a few hundred bytes in
/// flight always gets in while the peer holding the most is cut, and a peer that is itself the
/// largest is refused instead. Ties keep the connections already in.
struct AdmissionLedger: Sendable {
    /// What a read was told.
    enum Verdict: Sendable, Equatable {
        /// Counted; the connections listed are evicted to make room (close them).
        case held(evicting: [ConnectionID])
        /// Not counted: the connection is closed by this limit.
        case refused(ConnectionLimit)
    }

    private struct Connection {
        var group: PeerGroup
        var held = 0
        /// Evicted to make room: it holds nothing and may hold nothing until it leaves.
        var evicted = false
    }

    private struct Group {
        var members: Set<ConnectionID> = []
        var held = 0
    }

    var limits: ConnectionLimits
    private var connections: [ConnectionID: Connection] = [:]
    private var groups: [PeerGroup: Group] = [:]
    /// Unauthenticated bytes held by every connection.
    private(set) var held = 0
    private var lastID: UInt64 = 0

    init(limits: ConnectionLimits) { self.limits = limits }

    /// Admits a connection of `group` (nil: a group of its own, for a trusted proxy's
    /// connection); nil (nothing counted) when the group has `connections_per_peer` open.
    mutating func admit(_ group: PeerGroup?) -> ConnectionID? {
        if let group, groups[group, default: Group()].members.count >= limits.connectionsPerPeer { return nil }
        lastID += 1
        let id = ConnectionID(value: lastID)
        let group = group ?? .connection(id)
        connections[id] = Connection(group: group)
        groups[group, default: Group()].members.insert(id)
        return id
    }

    /// The connection closed: it is forgotten with whatever it held. Idempotent.
    mutating func leave(_ id: ConnectionID) {
        release(id)
        guard let connection = connections.removeValue(forKey: id) else { return }
        groups[connection.group]?.members.remove(id)
        if groups[connection.group]?.members.isEmpty == true { groups[connection.group] = nil }
    }

    /// Gives back everything `id` holds (it authenticated or its request was answered).
    mutating func release(_ id: ConnectionID) {
        guard let connection = connections[id], connection.held > 0 else { return }
        groups[connection.group]?.held -= connection.held
        held -= connection.held
        connections[id]?.held = 0
    }

    /// Counts `count` more bytes read by `id`.
    mutating func hold(_ count: Int, by id: ConnectionID) -> Verdict {
        guard let connection = connections[id], !connection.evicted else { return .refused(.unauthenticatedBytesTotal) }
        guard connection.held + count <= limits.unauthenticatedBytes else { return .refused(.unauthenticatedBytes) }
        let groupHeld = groups[connection.group, default: Group()].held + count
        guard groupHeld <= limits.unauthenticatedBytesPerPeer else { return .refused(.unauthenticatedBytesPerPeer) }
        // Planned first: nothing is evicted unless the read fits in the end.
        var evicting: [ConnectionID] = []
        if held + count > limits.unauthenticatedBytesTotal {
            var freed = 0
            var planned: [PeerGroup: Int] = [:]
            var memberHeld: [ConnectionID: Int] = [:]
            while held - freed + count > limits.unauthenticatedBytesTotal {
                guard let found = largest(other: connection.group, above: groupHeld, groupHeldNow: planned, memberHeld: memberHeld) else {
                    return .refused(.unauthenticatedBytesTotal)
                }
                let (victim, group) = found
                let bytes = connections[victim]?.held ?? 0
                freed += bytes
                planned[group] = (planned[group] ?? groups[group]?.held ?? 0) - bytes
                memberHeld[victim] = 0
                evicting.append(victim)
            }
            for victim in evicting { evict(victim) }
        }
        connections[id]?.held += count
        groups[connection.group]?.held += count
        held += count
        return .held(evicting: evicting)
    }

    /// Counts `id` for `group` from now on (a trusted proxy named its client), with what it
    /// holds; the limit that refuses it (nothing changed, close it) or nil.
    mutating func move(_ id: ConnectionID, to group: PeerGroup) -> ConnectionLimit? {
        guard let connection = connections[id], connection.group != group else { return nil }
        let target = groups[group, default: Group()]
        if target.members.count >= limits.connectionsPerPeer { return .connectionsPerPeer }
        if target.held + connection.held > limits.unauthenticatedBytesPerPeer { return .unauthenticatedBytesPerPeer }
        groups[connection.group]?.members.remove(id)
        groups[connection.group]?.held -= connection.held
        if groups[connection.group]?.members.isEmpty == true { groups[connection.group] = nil }
        groups[group, default: Group()].members.insert(id)
        groups[group]?.held += connection.held
        connections[id]?.group = group
        return nil
    }

    /// The connection holding the most of the group holding the most (other than `group`), if
    /// that group holds more than `bound`; `groupHeldNow` and `memberHeld` override what the
    /// ledger holds for groups and connections already planned for eviction.
    private func largest(
        other group: PeerGroup, above bound: Int, groupHeldNow: [PeerGroup: Int], memberHeld: [ConnectionID: Int]
    ) -> (ConnectionID, PeerGroup)? {
        var best: (group: PeerGroup, held: Int)?
        for (candidate, entry) in groups where candidate != group {
            let held = groupHeldNow[candidate] ?? entry.held
            guard held > bound else { continue }
            if best == nil || held > best!.held || held == best!.held && candidate.description < best!.group.description {
                best = (candidate, held)
            }
        }
        guard let best, let members = groups[best.group]?.members else { return nil }
        let heldBy = { (id: ConnectionID) in memberHeld[id] ?? connections[id]?.held ?? 0 }
        let victim = members.max { a, b in
            let (x, y) = (heldBy(a), heldBy(b))
            return x != y ? x < y : a > b
        }
        return victim.map { ($0, best.group) }
    }

    private mutating func evict(_ id: ConnectionID) {
        release(id)
        connections[id]?.evicted = true
    }

    // For ``ConnectionAdmission``'s gauge and tests.
    func held(by id: ConnectionID) -> Int { connections[id]?.held ?? 0 }
    func held(by group: PeerGroup) -> Int { groups[group]?.held ?? 0 }
    func connectionCount(of group: PeerGroup) -> Int { groups[group]?.members.count ?? 0 }
    func group(of id: ConnectionID) -> PeerGroup? { connections[id]?.group }
    var connectionCount: Int { connections.count }
}
