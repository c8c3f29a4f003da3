/// Local changes of one store covering local sequence numbers `firstSeq...lastSeq`.
public struct UploadChangeset: Sendable, Hashable {
    public var firstSeq: Int64
    public var lastSeq: Int64
    public var changeset: Changeset

    public init(firstSeq: Int64, lastSeq: Int64, changeset: Changeset) {
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.changeset = changeset
    }
}

/// Uploads local changes (client → server). The server acknowledges them with a
/// ``DownloadEntry`` without changes whose ``DownloadEntry/integratedClientSeq`` covers them.
public struct Upload: Sendable, Hashable {
    public var session: SessionID
    public var changesets: [UploadChangeset]

    public init(session: SessionID, changesets: [UploadChangeset]) {
        self.session = session
        self.changesets = changesets
    }
}
