/// How far a state download has got.
public struct DownloadProgress: Sendable, Hashable, Codable {
    public var rowsDone: Int64
    public var rowsTotal: Int64
    public var bytesDone: Int64
    public var bytesTotal: Int64

    public init(rowsDone: Int64, rowsTotal: Int64, bytesDone: Int64, bytesTotal: Int64) {
        self.rowsDone = rowsDone
        self.rowsTotal = rowsTotal
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
    }

    public static let none = DownloadProgress(rowsDone: 0, rowsTotal: 0, bytesDone: 0, bytesTotal: 0)
}

/// One chunk of a partition's whole state (server → client), for a new store or a client
/// reset. Every chunk's rows are `insert` changes (``StateRows``, read in place); the last
/// chunk has ``isLast`` set. The state is the partition at ``serverVersion``; downloads
/// continue after it.
public struct StateChunk: Sendable, Hashable {
    public var session: SessionID
    public var serverVersion: ServerVersion
    public var progress: DownloadProgress
    public var isLast: Bool
    public var rows: StateRows

    public init(session: SessionID, serverVersion: ServerVersion, progress: DownloadProgress, isLast: Bool, rows: StateRows) {
        self.session = session
        self.serverVersion = serverVersion
        self.progress = progress
        self.isLast = isLast
        self.rows = rows
    }

    /// A chunk of the given inserts.
    public init(session: SessionID, serverVersion: ServerVersion, progress: DownloadProgress, isLast: Bool, rows: Changeset) {
        self.init(session: session, serverVersion: serverVersion, progress: progress, isLast: isLast, rows: StateRows(rows))
    }
}
