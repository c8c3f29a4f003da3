/// Identifies one partition's session on a connection. Chosen by the client; several
/// sessions are multiplexed over one WebSocket connection.
public typealias SessionID = UInt32

/// The first message on every connection (client → server).
public struct Hello: Sendable, Hashable {
    public var protocolVersion: Int
    /// The client's software and release, for the server's logs (`tetherd 0.1.0`).
    public var software: String

    public init(protocolVersion: Int = TetherVersion.syncProtocol, software: String) {
        self.protocolVersion = protocolVersion
        self.software = software
    }
}

/// The server's answer to a compatible ``Hello``.
public struct Welcome: Sendable, Hashable {
    public var protocolVersion: Int
    public var software: String

    public init(protocolVersion: Int = TetherVersion.syncProtocol, software: String) {
        self.protocolVersion = protocolVersion
        self.software = software
    }
}

/// Binds a partition to a session (client → server).
public struct BindRequest: Sendable, Hashable {
    public var session: SessionID
    /// As configured on the device; the server answers 204 when it is not a legal name.
    public var partition: String
    /// The user's access token. Never logged.
    public var token: String
    /// The store's sync identity, or nil for a new store (or one being reset).
    public var identity: ClientFileIdentity?
    /// The last server version the store integrated (``SyncVersion/zero`` when none).
    public var lastServerVersion: SyncVersion
    /// The schema version the store was created or last migrated with; 0 for a new store.
    public var schemaVersion: Int

    public init(
        session: SessionID, partition: String, token: String, identity: ClientFileIdentity?,
        lastServerVersion: SyncVersion = .zero, schemaVersion: Int = 0
    ) {
        self.session = session
        self.partition = partition
        self.token = token
        self.identity = identity
        self.lastServerVersion = lastServerVersion
        self.schemaVersion = schemaVersion
    }
}

/// The server's answer to an accepted bind.
public struct BindReply: Sendable, Hashable {
    public var session: SessionID
    /// The store's identity: newly assigned when ``isNewIdentity``, else the one it sent.
    public var identity: ClientFileIdentity
    public var isNewIdentity: Bool
    /// When true, ``StateChunk``s follow (a new store or a reset), then downloads.
    public var stateFollows: Bool
    public var access: PartitionAccess
    /// The partition's latest version when the bind was accepted.
    public var latestServerVersion: SyncVersion
    /// The server's current schema (its `version` is the schema version).
    public var schema: Schema
    /// The highest local seq of this client file the server has integrated: uploads resume
    /// after it (docs/sync-model.md). 0 for a new identity.
    public var integratedClientSeq: Int64

    public init(
        session: SessionID, identity: ClientFileIdentity, isNewIdentity: Bool, stateFollows: Bool,
        access: PartitionAccess, latestServerVersion: SyncVersion, schema: Schema, integratedClientSeq: Int64 = 0
    ) {
        self.integratedClientSeq = integratedClientSeq
        self.session = session
        self.identity = identity
        self.isNewIdentity = isNewIdentity
        self.stateFollows = stateFollows
        self.access = access
        self.latestServerVersion = latestServerVersion
        self.schema = schema
    }
}

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
/// reset. Every chunk's rows are `insert` changes; the last chunk has ``isLast`` set. The
/// state is the partition at ``serverVersion``; downloads continue after it.
public struct StateChunk: Sendable, Hashable {
    public var session: SessionID
    public var serverVersion: SyncVersion
    public var progress: DownloadProgress
    public var isLast: Bool
    public var rows: Changeset

    public init(session: SessionID, serverVersion: SyncVersion, progress: DownloadProgress, isLast: Bool, rows: Changeset) {
        self.session = session
        self.serverVersion = serverVersion
        self.progress = progress
        self.isLast = isLast
        self.rows = rows
    }
}

/// Local changes of one store covering local sequence numbers `firstSeq...lastSeq`.
public struct UploadChangeset: Sendable, Hashable {
    /// The local seq this batch was read after: the server integrates it only when that is
    /// exactly what it integrated last, so a collapsed batch is taken whole or not at all.
    public var afterSeq: Int64
    public var firstSeq: Int64
    public var lastSeq: Int64
    public var changeset: Changeset

    public init(afterSeq: Int64? = nil, firstSeq: Int64, lastSeq: Int64, changeset: Changeset) {
        self.afterSeq = afterSeq ?? firstSeq - 1
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

/// One server version of a partition's history, as seen by one store.
public struct DownloadEntry: Sendable, Hashable {
    public var serverVersion: SyncVersion
    /// The highest local sequence number of the receiving store integrated at this version.
    public var integratedClientSeq: Int64
    /// Empty for the receiving store's own changes (the acknowledgement).
    public var changeset: Changeset

    public init(serverVersion: SyncVersion, integratedClientSeq: Int64, changeset: Changeset) {
        self.serverVersion = serverVersion
        self.integratedClientSeq = integratedClientSeq
        self.changeset = changeset
    }
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

/// An error sent by the server: for one session, or for the whole connection when
/// ``session`` is nil (the server then closes the connection).
public struct ErrorMessage: Sendable, Hashable {
    public var session: SessionID?
    public var error: SyncError

    public init(session: SessionID?, error: SyncError) {
        self.session = session
        self.error = error
    }
}
