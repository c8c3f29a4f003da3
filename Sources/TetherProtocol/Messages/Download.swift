/// One server version of a partition's history, as seen by one store: what the server sends
/// and what the store applies (`PartitionStore.apply`), one type from the wire to the store.
public struct DownloadEntry: Sendable, Hashable {
    public var serverVersion: ServerVersion
    /// The highest local sequence number of the receiving store integrated at this version.
    public var integratedClientSeq: Int64
    /// The changes as received, checked and read in place (``ChangeRows``); empty for the
    /// receiving store's own changes (the acknowledgement).
    public var changes: ChangeRows

    public init(serverVersion: ServerVersion, integratedClientSeq: Int64, changes: ChangeRows) {
        self.serverVersion = serverVersion
        self.integratedClientSeq = integratedClientSeq
        self.changes = changes
    }

    /// An entry of `changeset`'s changes (tests, and what a caller holding changes sends).
    public init(serverVersion: ServerVersion, integratedClientSeq: Int64, changeset: Changeset = Changeset()) {
        self.init(serverVersion: serverVersion, integratedClientSeq: integratedClientSeq, changes: ChangeRows(changeset))
    }

    /// The changes decoded (tests and tools; the store applies ``changes`` in place).
    public var changeset: Changeset { changes.changeset }
}

/// A batch of history entries in server order (server → client).
public struct Download: Sendable, Hashable {
    public var session: SessionID
    /// The partition's latest version when the batch was sent: the store is caught up once
    /// it integrated the entry with this version.
    public var latestServerVersion: Int64
    public var entries: [DownloadEntry]

    public init(session: SessionID, latestServerVersion: Int64, entries: [DownloadEntry]) {
        self.session = session
        self.latestServerVersion = latestServerVersion
        self.entries = entries
    }
}
