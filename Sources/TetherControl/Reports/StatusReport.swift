/// The result of `status` (docs/operations.md "The control socket"): the connection, then
/// every partition. Keys that do not apply are `null`, never left out.
public struct StatusReport: Sendable, Hashable, Codable {
    /// The running agent: its release and protocols (nil from an agent older than them).
    public var agent: AgentReport?
    public var connection: ConnectionReport?
    public var partitions: [PartitionReport]

    public init(agent: AgentReport? = nil, connection: ConnectionReport?, partitions: [PartitionReport]) {
        self.agent = agent
        self.connection = connection
        self.partitions = partitions
    }
}

/// The running agent as `status` shows it: what an operator checks after an upgrade.
public struct AgentReport: Sendable, Hashable, Codable {
    public var release: String
    public var syncProtocol: Int
    public var controlProtocol: Int
    /// How the server's device ledger knows this device.
    public var deviceName: String
    public var deviceID: String?

    public init(release: String, syncProtocol: Int, controlProtocol: Int, deviceName: String, deviceID: String?) {
        self.release = release
        self.syncProtocol = syncProtocol
        self.controlProtocol = controlProtocol
        self.deviceName = deviceName
        self.deviceID = deviceID
    }

    enum CodingKeys: String, CodingKey {
        case release
        case syncProtocol = "sync_protocol"
        case controlProtocol = "control_protocol"
        case deviceName = "device_name"
        case deviceID = "device_id"
    }
}

/// The agent's connection to the server.
public struct ConnectionReport: Sendable, Hashable, Codable {
    public var serverURL: String
    public var connected: Bool
    /// ISO 8601; nil while not connected.
    public var connectedSince: String?
    /// The server's software and the sync protocol the connection speaks, once welcomed.
    public var serverSoftware: String?
    public var syncProtocol: Int?

    public init(serverURL: String, connected: Bool, connectedSince: String?, serverSoftware: String? = nil, syncProtocol: Int? = nil) {
        self.serverURL = serverURL
        self.connected = connected
        self.connectedSince = connectedSince
        self.serverSoftware = serverSoftware
        self.syncProtocol = syncProtocol
    }

    enum CodingKeys: String, CodingKey {
        case serverURL = "server_url", connected, connectedSince = "connected_since"
        case serverSoftware = "server_software", syncProtocol = "sync_protocol"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(serverURL, forKey: .serverURL)
        try c.encode(connected, forKey: .connected)
        try c.encode(connectedSince, forKey: .connectedSince)
        try c.encode(serverSoftware, forKey: .serverSoftware)
        try c.encode(syncProtocol, forKey: .syncProtocol)
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
    /// Changes of this device the server reverted since the agent started (error 231); nil from
    /// an agent older than subscriptions.
    public var compensatingWrites: Int?
    /// The last of them: table, key and reason.
    public var lastCompensatingWrite: CompensatingWriteReport?
    /// True while the store's subscriptions are being changed to the configured ones (the
    /// partition is not synced until they are); nil from an agent older than subscriptions.
    public var subscriptionsPending: Bool?

    public init(
        name: String, state: String, serverVersion: Int64, unsyncedChanges: Int, lastError: LastErrorReport? = nil,
        pendingReset: String? = nil, pendingResetReason: String? = nil, download: DownloadReport? = nil,
        compensatingWrites: Int? = nil, lastCompensatingWrite: CompensatingWriteReport? = nil, subscriptionsPending: Bool? = nil
    ) {
        self.compensatingWrites = compensatingWrites
        self.lastCompensatingWrite = lastCompensatingWrite
        self.subscriptionsPending = subscriptionsPending
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
        case compensatingWrites = "compensating_writes", lastCompensatingWrite = "last_compensating_write"
        case subscriptionsPending = "subscriptions_pending"
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
        try c.encode(compensatingWrites, forKey: .compensatingWrites)
        try c.encode(lastCompensatingWrite, forKey: .lastCompensatingWrite)
        try c.encode(subscriptionsPending, forKey: .subscriptionsPending)
    }
}

/// A change of the device the server reverted (error 231): which row, and why. Never values.
public struct CompensatingWriteReport: Sendable, Hashable, Codable {
    public var table: String
    public var key: String
    /// `outside_subscriptions`, `write_rule` or `read_only_column`.
    public var reason: String
    /// RFC 3339 UTC.
    public var at: String

    public init(table: String, key: String, reason: String, at: String) {
        self.table = table
        self.key = key
        self.reason = reason
        self.at = at
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
