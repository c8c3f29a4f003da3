public import TetherProtocol

/// Everything the agent remembers about one client reset; a row of the state database's
/// `resets` table and an entry of `tetherctl resets`.
public struct ResetRecord: Sendable, Hashable, Codable {
    public struct HookRun: Sendable, Hashable, Codable {
        public var event: HookEvent
        public var result: HookResult
        /// Seconds since the epoch.
        public var finishedAt: Double

        public init(event: HookEvent, result: HookResult, finishedAt: Double) {
            self.event = event
            self.result = result
            self.finishedAt = finishedAt
        }
    }

    public var id: String
    public var partition: PartitionName
    public var errorCode: SyncErrorCode
    public var errorMessage: String
    /// The mode configured for the partition when the reset started.
    public var mode: ResetMode
    /// What the reset does, after the fallbacks of docs/contract.md "Reset modes".
    public var strategy: ResetStrategy
    /// Why the strategy differs from the configured mode, when it does.
    public var fallbackReason: String?
    public var phase: ResetPhase
    public var outcome: ResetOutcome
    /// `<recovery_dir>/<partition>/<UTC time>-<id>.sqlite`, chosen when the reset is recorded.
    public var backupPath: String
    public var startedAt: Double
    public var finishedAt: Double?
    public var hooks: [HookRun]
    /// Unsynced changes replayed onto the server's state (recover) and dropped by the rules.
    public var recoveredChanges: Int?
    public var droppedChanges: Int?
    /// Changes the server wrote from this reset's view when healing a restore (0: it did not
    /// want the view, or refused it; nil: the reset did not offer its view).
    public var healedChanges: Int?
    /// Whether the server may have been healing when this reset offered its view (it took the
    /// view, declined it as covered by newer ones, or the offer was refused or not made before
    /// the server could say it wants none): the rewrite then keeps the unsynced updates and
    /// deletes of rows the server's state lacks, which another view may bring back
    /// (docs/client-reset.md, "Healing a restored server").
    public var viewContributed: Bool?
    /// How often the healing phase went back to fetching (another view healed meanwhile, or the
    /// server forgot the fetched identity); past ``ClientResetExecutor/maxHealRebases`` the reset
    /// goes on without healing.
    public var healRebases: Int?
    /// Set when the backup file was removed because `keep_backups` newer ones exist.
    public var backupRemoved: Bool = false
    /// Set for a store quarantined because it was corrupt or not SQLite: `backupPath` is then
    /// the quarantined file itself, which is never removed (docs/client-reset.md).
    public var quarantineReason: String?

    /// The server version the rewrite brought the store to (nil until the rewrite, and for a
    /// delete-store, which empties it).
    public var resultServerVersion: Int64?
    /// Set once a bind succeeded after this reset: the server accepted the store it produced.
    /// A reset-causing error before that is a repeat (``ResetLoopGuard``).
    public var confirmedByBind: Bool?
    /// How many resets before this one ended without a successful bind in between (0: none).
    public var loopRepeats: Int?
    /// Set when no new backup was written because the store had not changed since reset
    /// `backupReusedFrom` finished: `backupPath` is that reset's backup (docs/client-reset.md).
    public var backupReusedFrom: String?

    /// Set for a reset of a store restored from an older copy or synced from two places
    /// (errors 209 and 210, docs/client-reset.md "Restored and cloned devices").
    public var cause: LineageCause?
    /// The store's client file id when the reset started (nil: none, or a record written before
    /// this field): a store that carries another identity before the rewrite has moved on
    /// since, and the record is stale (a state database restored from an older copy). Ids are
    /// never reused; the salt is not kept here (records are shown by `tetherctl resets`).
    public var storeClientFile: Int64?

    /// True for the record of a quarantined store.
    public var isQuarantine: Bool { quarantineReason != nil }

    /// A reset just recorded, for `error` (its code and message are kept).
    public init(
        id: String, partition: PartitionName, error: SyncError, mode: ResetMode,
        strategy: ResetStrategy, fallbackReason: String? = nil, backupPath: String, startedAt: Double
    ) {
        self.id = id
        self.partition = partition
        self.errorCode = error.code
        self.errorMessage = error.message
        self.mode = mode
        self.strategy = strategy
        self.fallbackReason = fallbackReason
        self.phase = .recorded
        self.outcome = .inProgress
        self.backupPath = backupPath
        self.startedAt = startedAt
        self.finishedAt = nil
        self.hooks = []
    }
}
