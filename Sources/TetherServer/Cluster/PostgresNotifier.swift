import Logging
import PostgresNIO

/// ``ClusterBus`` over PostgreSQL's NOTIFY on the channel ``channel``. Announcements made
/// while a NOTIFY is in flight are coalesced into the next one (one payload per batch, each
/// under 8000 bytes), so a burst of uploads costs a few notifications, not one each.
package actor PostgresNotifier: ClusterBus {
    package static let channel = "tether_events"

    let storage: PostgresServerStorage
    /// This instance's id, the first line of its payloads (listeners skip their own).
    package nonisolated let sender: String
    /// The second key of this instance's liveness lock (see ``acquire(clientFile:)``).
    package nonisolated let holderKey = Int32.random(in: 1...Int32.max)
    let logger: Logger
    private var pending: [ClusterEvent] = []
    private var flushing = false

    package init(storage: PostgresServerStorage, sender: String, logger: Logger) {
        self.storage = storage
        self.sender = sender
        self.logger = logger
    }

    package func announce(_ event: ClusterEvent) async {
        if !pending.contains(event) { pending.append(event) }
        // A caller is already sending: it sends this one too when its NOTIFY returns.
        guard !flushing else { return }
        flushing = true
        defer { flushing = false }
        while !pending.isEmpty {
            let batch = pending
            pending = []
            for payload in ClusterEvent.payloads(batch, sender: sender) {
                do {
                    try await storage.notify(channel: Self.channel, payload: payload)
                } catch {
                    // The others catch up when they re-read heads (after a reconnect, on their timer).
                    logger.warning("cannot notify the other instances", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}

extension PostgresServerStorage {
    func notify(channel: String, payload: String) async throws {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await connection.guardedQuery("SELECT pg_notify(\(channel), \(payload))", logger: logger)
            }
        }
    }
}
