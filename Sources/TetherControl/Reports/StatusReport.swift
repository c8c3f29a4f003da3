/// The result of `status` (docs/operations.md "The control socket"): the connection, then
/// every partition. Keys that do not apply are `null`, never left out.
public struct StatusReport: Sendable, Hashable, Codable {
    public var connection: ConnectionReport?
    public var partitions: [PartitionReport]

    public init(connection: ConnectionReport?, partitions: [PartitionReport]) {
        self.connection = connection
        self.partitions = partitions
    }
}

/// The agent's connection to the server.
public struct ConnectionReport: Sendable, Hashable, Codable {
    public var serverURL: String
    public var connected: Bool
    /// ISO 8601; nil while not connected.
    public var connectedSince: String?

    public init(serverURL: String, connected: Bool, connectedSince: String?) {
        self.serverURL = serverURL
        self.connected = connected
        self.connectedSince = connectedSince
    }

    enum CodingKeys: String, CodingKey {
        case serverURL = "server_url", connected, connectedSince = "connected_since"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(serverURL, forKey: .serverURL)
        try c.encode(connected, forKey: .connected)
        try c.encode(connectedSince, forKey: .connectedSince)
    }
}

/// One partition's line of `status`.
public struct PartitionReport: Sendable, Hashable, Codable {
    public var name: String
    /// A ``PartitionState`` raw value of the agent (`synced`, `offline`, …).
    public var state: String
    public var serverVersion: Int64
    public var unsyncedChanges: Int
    public var lastError: LastErrorReport?
    public var pendingReset: String?
    public var pendingResetReason: String?
    public var download: DownloadReport?

    public init(
        name: String, state: String, serverVersion: Int64, unsyncedChanges: Int, lastError: LastErrorReport? = nil,
        pendingReset: String? = nil, pendingResetReason: String? = nil, download: DownloadReport? = nil
    ) {
        self.name = name
        self.state = state
        self.serverVersion = serverVersion
        self.unsyncedChanges = unsyncedChanges
        self.lastError = lastError
        self.pendingReset = pendingReset
        self.pendingResetReason = pendingResetReason
        self.download = download
    }

    enum CodingKeys: String, CodingKey {
        case name, state, download
        case serverVersion = "server_version", unsyncedChanges = "unsynced_changes", lastError = "last_error"
        case pendingReset = "pending_reset", pendingResetReason = "pending_reset_reason"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(state, forKey: .state)
        try c.encode(serverVersion, forKey: .serverVersion)
        try c.encode(unsyncedChanges, forKey: .unsyncedChanges)
        try c.encode(lastError, forKey: .lastError)
        try c.encode(pendingReset, forKey: .pendingReset)
        try c.encode(pendingResetReason, forKey: .pendingResetReason)
        try c.encode(download, forKey: .download)
    }
}

/// The last sync error of a partition.
public struct LastErrorReport: Sendable, Hashable, Codable {
    public var code: Int
    public var message: String
    /// ISO 8601.
    public var at: String
    /// `store-regressed` or `store-cloned` for a lineage error, else nil.
    public var cause: String?

    public init(code: Int, message: String, at: String, cause: String?) {
        self.code = code
        self.message = message
        self.at = at
        self.cause = cause
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(message, forKey: .message)
        try c.encode(at, forKey: .at)
        try c.encode(cause, forKey: .cause)
    }
}

/// A bootstrap's or a reset's download of the server's state, as far as it got.
public struct DownloadReport: Sendable, Hashable, Codable {
    public var rowsDone: Int64
    public var rowsTotal: Int64
    public var bytesDone: Int64
    public var bytesTotal: Int64
    /// ISO 8601.
    public var startedAt: String
    public var rowsPerSecond: Double
    public var bytesPerSecond: Double

    public init(
        rowsDone: Int64, rowsTotal: Int64, bytesDone: Int64, bytesTotal: Int64, startedAt: String, rowsPerSecond: Double,
        bytesPerSecond: Double
    ) {
        self.rowsDone = rowsDone
        self.rowsTotal = rowsTotal
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.startedAt = startedAt
        self.rowsPerSecond = rowsPerSecond
        self.bytesPerSecond = bytesPerSecond
    }

    enum CodingKeys: String, CodingKey {
        case rowsDone = "rows_done", rowsTotal = "rows_total", bytesDone = "bytes_done", bytesTotal = "bytes_total"
        case startedAt = "started_at", rowsPerSecond = "rows_per_second", bytesPerSecond = "bytes_per_second"
    }
}
