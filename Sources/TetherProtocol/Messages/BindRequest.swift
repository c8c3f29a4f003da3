/// Binds a partition to a session (client → server).
package struct BindRequest: Sendable, Hashable {
    package var session: SessionID
    /// As configured on the device; the server answers 204 when it is not a legal name.
    package var partition: String
    /// The user's access token. Never logged.
    package var token: String
    /// The store's sync identity, or nil for a new store (or one being reset).
    package var identity: ClientFileIdentity?
    /// The last server version the store integrated (``ServerVersion/zero`` when none).
    package var lastServerVersion: ServerVersion
    /// The schema version the store was created or last migrated with; 0 for a new store.
    package var schemaVersion: Int
    /// What the store says of its local history (protocol 3; nil from an older agent, whose
    /// binds are not checked for regression).
    package var lineage: StoreLineage?
    /// Whether a bind without identity takes its state as a ready file (protocol 5; nil: rows).
    /// Sent only after a lineage.
    package var readyFile: ReadyFileRequest?
    /// What the store holds and the device wants of the partition (protocol 9; nil from an
    /// older agent: the whole partition). Sent only after a lineage.
    package var subscriptions: SubscriptionRequest?

    package init(
        session: SessionID, partition: String, token: String, identity: ClientFileIdentity?,
        lastServerVersion: ServerVersion = .none, schemaVersion: Int = 0, lineage: StoreLineage? = nil,
        readyFile: ReadyFileRequest? = nil, subscriptions: SubscriptionRequest? = nil
    ) {
        self.subscriptions = subscriptions
        self.lineage = lineage
        self.readyFile = readyFile
        self.session = session
        self.partition = partition
        self.token = token
        self.identity = identity
        self.lastServerVersion = lastServerVersion
        self.schemaVersion = schemaVersion
    }
}
