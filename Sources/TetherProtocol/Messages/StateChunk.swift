/// How far a state download has got.
package struct DownloadProgress: Sendable, Hashable, Codable {
    package var rowsDone: Int64
    package var rowsTotal: Int64
    package var bytesDone: Int64
    package var bytesTotal: Int64

    package init(rowsDone: Int64, rowsTotal: Int64, bytesDone: Int64, bytesTotal: Int64) {
        self.rowsDone = rowsDone
        self.rowsTotal = rowsTotal
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
    }

    package static let none = DownloadProgress(rowsDone: 0, rowsTotal: 0, bytesDone: 0, bytesTotal: 0)
}

/// One chunk of a partition's whole state (server → client), for a new store or a client
/// reset: rows (`insert` changes, ``StateRows``, read in place) or, on a session bound with
/// ``BindReply/fileFollows``, a slice of a ready file. The last chunk has ``isLast`` set. The
/// state is the partition at ``serverVersion``; downloads continue after it.
package struct StateChunk: Sendable, Hashable {
    /// What a chunk carries.
    package enum Content: Sendable, Hashable {
        case rows(StateRows)
        case file(StateFileSlice)
    }

    package var session: SessionID
    package var serverVersion: ServerVersion
    package var progress: DownloadProgress
    package var isLast: Bool
    package var content: Content

    package init(session: SessionID, serverVersion: ServerVersion, progress: DownloadProgress, isLast: Bool, content: Content) {
        self.session = session
        self.serverVersion = serverVersion
        self.progress = progress
        self.isLast = isLast
        self.content = content
    }

    /// A chunk of rows.
    package init(session: SessionID, serverVersion: ServerVersion, progress: DownloadProgress, isLast: Bool, rows: StateRows) {
        self.init(session: session, serverVersion: serverVersion, progress: progress, isLast: isLast, content: .rows(rows))
    }

    /// The rows of a rows chunk; none for a file slice.
    package var rows: StateRows {
        if case .rows(let rows) = content { rows } else { StateRows(Changeset()) }
    }

    /// The bytes this chunk moves toward the state: its rows' or its slice's.
    package var byteCount: Int {
        switch content {
        case .rows(let rows): rows.byteCount
        case .file(let slice): slice.fileBytes
        }
    }

    /// A chunk of the given inserts.
    package init(session: SessionID, serverVersion: ServerVersion, progress: DownloadProgress, isLast: Bool, rows: Changeset) {
        self.init(session: session, serverVersion: serverVersion, progress: progress, isLast: isLast, rows: StateRows(rows))
    }
}
