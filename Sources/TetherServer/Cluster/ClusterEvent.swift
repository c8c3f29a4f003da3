import TetherProtocol

/// A change one server instance tells the others about when several share a database
/// (PostgreSQL). Each is announced after its transaction committed; a lost one only delays
/// the others, which also re-read everything after a reconnect and on a slow timer.
package enum ClusterEvent: Sendable, Hashable {
    /// The partition has a new version: wake its sessions.
    case newVersion(PartitionName)
    /// The partition was restored: its sessions must bind again.
    case restored(PartitionName)
    /// Sync terminated or enabled, or recovery switched: re-read the flags.
    case flagsChanged
    /// A schema was applied: re-read the schemas; every session binds again.
    case schemaChanged
    /// A grant was added or revoked at run time: re-read the grants, re-check every session.
    case grantsChanged
    /// An enrolled device's tags changed: its sessions bind again (its name; `[A-Za-z0-9._-]`).
    case deviceChanged(String)
    /// An enrolled device was revoked or removed: its sessions end (203).
    case deviceRevoked(String)
    /// Remote actions were queued for the device with this id (nil: for many devices): send the
    /// pending ones to its connections here (a device id; `[A-Za-z0-9._-]`).
    case actionsQueued(String?)

    /// One line of a notification's payload: `v store-17`, `r store-17`, `f`, `s`, `g`,
    /// `d till-17`, `k till-17`, `a 4f1c…`, `a`.
    package var line: String {
        switch self {
        case .newVersion(let p): "v \(p.rawValue)"
        case .restored(let p): "r \(p.rawValue)"
        case .flagsChanged: "f"
        case .schemaChanged: "s"
        case .grantsChanged: "g"
        case .deviceChanged(let name): "d \(name)"
        case .deviceRevoked(let name): "k \(name)"
        case .actionsQueued(let id): id.map { "a \($0)" } ?? "a"
        }
    }

    package init?(line: Substring) {
        let parts = line.split(separator: " ", maxSplits: 1)
        switch (parts.first, parts.count) {
        case ("v", 2): guard let p = PartitionName(String(parts[1])) else { return nil }; self = .newVersion(p)
        case ("r", 2): guard let p = PartitionName(String(parts[1])) else { return nil }; self = .restored(p)
        case ("f", 1): self = .flagsChanged
        case ("s", 1): self = .schemaChanged
        case ("g", 1): self = .grantsChanged
        case ("d", 2): guard DeviceIdentityRules.isValidName(String(parts[1])) else { return nil }; self = .deviceChanged(String(parts[1]))
        case ("k", 2): guard DeviceIdentityRules.isValidName(String(parts[1])) else { return nil }; self = .deviceRevoked(String(parts[1]))
        case ("a", 1): self = .actionsQueued(nil)
        case ("a", 2): guard DeviceReport.isValidDeviceID(String(parts[1])) else { return nil }; self = .actionsQueued(String(parts[1]))
        default: return nil
        }
    }

    /// Payloads of at most `limit` bytes (PostgreSQL's NOTIFY takes fewer than 8000), each
    /// starting with the sender's id so an instance can skip its own.
    package static func payloads(_ events: [ClusterEvent], sender: String, limit: Int = 7900) -> [String] {
        var payloads: [String] = []
        var current = sender
        for event in events {
            let line = event.line
            if current.utf8.count + 1 + line.utf8.count > limit, current != sender {
                payloads.append(current)
                current = sender
            }
            current += "\n" + line
        }
        if current != sender { payloads.append(current) }
        return payloads
    }

    /// The sender and the events of a payload (unknown lines are skipped).
    package static func parse(payload: String) -> (sender: String, events: [ClusterEvent]) {
        let lines = payload.split(separator: "\n")
        guard let sender = lines.first else { return ("", []) }
        return (String(sender), lines.dropFirst().compactMap { ClusterEvent(line: $0) })
    }
}

/// How an instance tells the others sharing its storage about changes. nil for SQLite: one
/// process owns the database.
package protocol ClusterBus: Sendable {
    /// Tells every other instance, after the change committed (coalesced with others pending).
    func announce(_ event: ClusterEvent) async
    /// Takes the lease on a client file for this instance's session; false when a session of
    /// another live instance holds it (108 across instances).
    func acquire(clientFile: Int64) async throws -> Bool
    /// Gives back the leases of client files whose sessions here ended.
    func release(clientFiles: [Int64]) async
}
