/// A batch of one store's local changes: those with `afterSeq < seq <= lastSeq`, collapsed
/// per row, so the server takes it whole or not at all (docs/sync-model.md): it integrates
/// the batch when `afterSeq` is the seq it integrated last for the store, ignores it when
/// `lastSeq` is at or below that seq (a re-send), and refuses anything else (a gap).
/// One type from the store (`PartitionStore.pendingChanges(after:limit:)`) to the wire.
package struct UploadChangeset: Sendable, Hashable {
    /// The seq the batch was read after: the last seq of the previous batch.
    package var afterSeq: Int64
    /// The first and last seq of the changes it covers, `afterSeq < firstSeq <= lastSeq`.
    package var firstSeq: Int64
    package var lastSeq: Int64
    /// The changes as read from the store or received, in their wire form (``ChangeRows``): a
    /// server stores them as they are.
    package var changes: ChangeRows

    package init(afterSeq: Int64, firstSeq: Int64, lastSeq: Int64, changes: ChangeRows) {
        self.afterSeq = afterSeq
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.changes = changes
    }

    /// A batch of `changeset`'s changes (tests, tools).
    package init(afterSeq: Int64, firstSeq: Int64, lastSeq: Int64, changeset: Changeset) {
        self.init(afterSeq: afterSeq, firstSeq: firstSeq, lastSeq: lastSeq, changes: ChangeRows(changeset))
    }

    /// The changes decoded.
    package var changeset: Changeset { changes.changeset }

    /// A batch that directly follows the previous one (`afterSeq = firstSeq - 1`).
    package init(firstSeq: Int64, lastSeq: Int64, changeset: Changeset) {
        self.init(afterSeq: firstSeq - 1, firstSeq: firstSeq, lastSeq: lastSeq, changeset: changeset)
    }
}

/// Uploads local changes (client → server). The server acknowledges them with a
/// ``DownloadEntry`` without changes whose ``DownloadEntry/integratedClientSeq`` covers them.
package struct Upload: Sendable, Hashable {
    package var session: SessionID
    package var changesets: [UploadChangeset]

    package init(session: SessionID, changesets: [UploadChangeset]) {
        self.session = session
        self.changesets = changesets
    }
}
