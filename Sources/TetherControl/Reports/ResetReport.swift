/// The result of `resets`: the reset records, oldest first.
public struct ResetsReport: Sendable, Hashable, Codable {
    public var resets: [ResetReport]
    public init(resets: [ResetReport]) { self.resets = resets }
}

/// One client reset as `resets` shows it (docs/client-reset.md). Keys that do not apply are
/// `null`, never left out.
public struct ResetReport: Sendable, Hashable, Codable {
    public var id: String
    public var partition: String
    public var errorCode: Int
    public var errorMessage: String
    public var mode: String
    public var strategy: String
    public var outcome: String
    public var phase: String
    public var backupPath: String
    public var backupRemoved: Bool
    public var startedAt: String
    public var finishedAt: String?
    public var fallbackReason: String?
    public var cause: String?
    public var quarantined: Bool
    public var quarantineReason: String?
    public var recoveredChanges: Int?
    public var droppedChanges: Int?
    /// Changes the server wrote from the reset's view when healing a restore (null: the
    /// reset did not offer its view).
    public var healedChanges: Int?
    public var resultServerVersion: Int64?
    public var loopRepeats: Int
    public var backupReusedFrom: String?
    public var hooks: [HookRunReport]

    public init(
        id: String, partition: String, errorCode: Int, errorMessage: String, mode: String, strategy: String, outcome: String,
        phase: String, backupPath: String, backupRemoved: Bool, startedAt: String, finishedAt: String?, fallbackReason: String?,
        cause: String?, quarantined: Bool, quarantineReason: String?, recoveredChanges: Int?, droppedChanges: Int?,
        healedChanges: Int? = nil, resultServerVersion: Int64?, loopRepeats: Int, backupReusedFrom: String?, hooks: [HookRunReport]
    ) {
        self.id = id
        self.partition = partition
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.mode = mode
        self.strategy = strategy
        self.outcome = outcome
        self.phase = phase
        self.backupPath = backupPath
        self.backupRemoved = backupRemoved
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.fallbackReason = fallbackReason
        self.cause = cause
        self.quarantined = quarantined
        self.quarantineReason = quarantineReason
        self.recoveredChanges = recoveredChanges
        self.droppedChanges = droppedChanges
        self.healedChanges = healedChanges
        self.resultServerVersion = resultServerVersion
        self.loopRepeats = loopRepeats
        self.backupReusedFrom = backupReusedFrom
        self.hooks = hooks
    }

    enum CodingKeys: String, CodingKey {
        case id, partition, mode, strategy, outcome, phase, cause, quarantined, hooks
        case errorCode = "error_code", errorMessage = "error_message", backupPath = "backup_path"
        case backupRemoved = "backup_removed", startedAt = "started_at", finishedAt = "finished_at"
        case fallbackReason = "fallback_reason", quarantineReason = "quarantine_reason"
        case recoveredChanges = "recovered_changes", droppedChanges = "dropped_changes", healedChanges = "healed_changes"
        case resultServerVersion = "result_server_version", loopRepeats = "loop_repeats", backupReusedFrom = "backup_reused_from"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(partition, forKey: .partition)
        try c.encode(errorCode, forKey: .errorCode)
        try c.encode(errorMessage, forKey: .errorMessage)
        try c.encode(mode, forKey: .mode)
        try c.encode(strategy, forKey: .strategy)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(phase, forKey: .phase)
        try c.encode(backupPath, forKey: .backupPath)
        try c.encode(backupRemoved, forKey: .backupRemoved)
        try c.encode(startedAt, forKey: .startedAt)
        try c.encode(finishedAt, forKey: .finishedAt)
        try c.encode(fallbackReason, forKey: .fallbackReason)
        try c.encode(cause, forKey: .cause)
        try c.encode(quarantined, forKey: .quarantined)
        try c.encode(quarantineReason, forKey: .quarantineReason)
        try c.encode(recoveredChanges, forKey: .recoveredChanges)
        try c.encode(droppedChanges, forKey: .droppedChanges)
        try c.encode(healedChanges, forKey: .healedChanges)
        try c.encode(resultServerVersion, forKey: .resultServerVersion)
        try c.encode(loopRepeats, forKey: .loopRepeats)
        try c.encode(backupReusedFrom, forKey: .backupReusedFrom)
        try c.encode(hooks, forKey: .hooks)
    }
}

/// One hook run of a reset.
public struct HookRunReport: Sendable, Hashable, Codable {
    /// `before-reset`, `after-reset` or `manual-reset`.
    public var event: String
    /// How it ended, in words (`exited with status 0`, `killed after 60 s`, …).
    public var result: String
    public var succeeded: Bool
    public var finishedAt: String

    public init(event: String, result: String, succeeded: Bool, finishedAt: String) {
        self.event = event
        self.result = result
        self.succeeded = succeeded
        self.finishedAt = finishedAt
    }

    enum CodingKeys: String, CodingKey {
        case event, result, succeeded, finishedAt = "finished_at"
    }
}

/// The result of `reset-initiate`.
public struct ResetInitiatedReport: Sendable, Hashable, Codable {
    public var id: String
    public var partition: String
    /// `initiated` for a pending manual reset now requested, else the reset's outcome.
    public var outcome: String

    public init(id: String, partition: String, outcome: String) {
        self.id = id
        self.partition = partition
        self.outcome = outcome
    }
}
