/// Binds a partition to a session (client → server).
public struct BindRequest: Sendable, Hashable {
    public var session: SessionID
    /// As configured on the device; the server answers 204 when it is not a legal name.
    public var partition: String
    /// The user's access token. Never logged.
    public var token: String
    /// The store's sync identity, or nil for a new store (or one being reset).
    public var identity: ClientFileIdentity?
    /// The last server version the store integrated (``ServerVersion/zero`` when none).
    public var lastServerVersion: ServerVersion
    /// The schema version the store was created or last migrated with; 0 for a new store.
    public var schemaVersion: Int
    /// What the store says of its local history (protocol 3; nil from an older agent, whose
    /// binds are not checked for regression).
    public var lineage: StoreLineage?
    /// Whether a bind without identity takes its state as a ready file (protocol 5; nil: rows).
    /// Sent only after a lineage.
    public var readyFile: ReadyFileRequest?

    public init(
        session: SessionID, partition: String, token: String, identity: ClientFileIdentity?,
        lastServerVersion: ServerVersion = .none, schemaVersion: Int = 0, lineage: StoreLineage? = nil,
        readyFile: ReadyFileRequest? = nil
    ) {
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
