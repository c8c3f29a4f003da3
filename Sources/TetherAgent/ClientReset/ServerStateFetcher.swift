import TetherProtocol
import TetherStore

/// The server's state of a partition, downloaded into a staging store.
package struct FetchedState: Sendable, Hashable {
    /// A complete store holding the server's state, its schema, the new client file identity
    /// and the server version it represents.
    package var path: String
    package var schema: Schema
    package var identity: ClientFileIdentity
    package var serverVersion: ServerVersion
    /// The subscriptions the state was taken with (nil: the whole partition).
    package var subscriptions: SubscriptionSet?

    package init(
        path: String, schema: Schema, identity: ClientFileIdentity, serverVersion: ServerVersion, subscriptions: SubscriptionSet? = nil
    ) {
        self.path = path
        self.schema = schema
        self.identity = identity
        self.serverVersion = serverVersion
        self.subscriptions = subscriptions
    }

    /// Reads back a staging store a previous run completed; nil when there is none, or it is
    /// not complete (no identity recorded), or it cannot be read: the state is then fetched
    /// again, which a staging file never prevents (it is only a shortcut past a download).
    package static func existing(at path: String, partition: PartitionName) -> FetchedState? {
        // Unreadable or incomplete (both lines): nil, and the state is fetched again.
        guard let schema = try? PartitionStore.recordedSchema(path: path, place: .staging) else { return nil }
        guard let metadata = try? PartitionStore.metadata(ofStoreAt: path, place: .staging), let identity = metadata.clientFile else { return nil }
        return FetchedState(
            path: path, schema: schema, identity: identity, serverVersion: metadata.serverVersion, subscriptions: metadata.subscriptions)
    }
}

/// Step 4 of a reset: bind the partition as a new device and download the server's whole
/// state (docs/contract.md: Reset steps). The agent implements it over its server connection; tests fake it.
package protocol ServerStateFetcher: Sendable {
    /// Downloads the state of `partition` into a new store at `stagingPath` (replacing any file
    /// there). The staging store's metadata must hold the new identity and server version
    /// only once every row is in.
    func fetchState(of partition: PartitionName, into stagingPath: String) async throws -> FetchedState

    /// Brings the staging store `fetched` describes up to the server's latest version with
    /// the history written since it was downloaded — after a heal, the heal's own writes and
    /// whatever other devices wrote meanwhile — instead of downloading the whole state again.
    /// Each batch is applied in one transaction that also records its version, so a catch-up
    /// cut short resumes from where it stopped. Throws ``StateCatchUpUnavailable`` when the
    /// bind's reply shows the server cannot continue that staging copy (a whole state follows,
    /// the schema changed, the history ends before it), and the server's error when it refuses
    /// the bind (the identity refused, the history compacted past it): a reset-class or final
    /// one makes the reset fetch the state whole.
    func catchUp(_ fetched: FetchedState, of partition: PartitionName) async throws -> FetchedState
}

/// The server cannot continue a staging copy with history: the reset fetches the state whole.
package struct StateCatchUpUnavailable: Error, Sendable, CustomStringConvertible {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}
