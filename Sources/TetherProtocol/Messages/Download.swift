/// One server version of a partition's history, as seen by one store: what the server sends
/// and what the store applies (`PartitionStore.apply`), one type from the wire to the store.
package struct DownloadEntry: Sendable, Hashable {
    package var serverVersion: ServerVersion
    /// The highest local sequence number of the receiving store integrated at this version.
    package var integratedClientSeq: Int64
    /// The changes as received, checked and read in place (``ChangeRows``); empty for the
    /// receiving store's own changes (the acknowledgement).
    package var changes: ChangeRows

    package init(serverVersion: ServerVersion, integratedClientSeq: Int64, changes: ChangeRows) {
        self.serverVersion = serverVersion
        self.integratedClientSeq = integratedClientSeq
        self.changes = changes
    }

    /// An entry of `changeset`'s changes (tests, and what a caller holding changes sends).
    package init(serverVersion: ServerVersion, integratedClientSeq: Int64, changeset: Changeset = Changeset()) {
        self.init(serverVersion: serverVersion, integratedClientSeq: integratedClientSeq, changes: ChangeRows(changeset))
    }

    /// The changes decoded (tests and tools; the store applies ``changes`` in place).
    package var changeset: Changeset { changes.changeset }
}

/// A batch of history entries in server order (server → client).
package struct Download: Sendable, Hashable {
    package var session: SessionID
    /// The partition's latest version when the batch was sent: the store is caught up once
    /// it integrated the entry with this version.
    package var latestServerVersion: Int64
    package var entries: [DownloadEntry]

    package init(session: SessionID, latestServerVersion: Int64, entries: [DownloadEntry]) {
        self.session = session
        self.latestServerVersion = latestServerVersion
        self.entries = entries
    }
}
