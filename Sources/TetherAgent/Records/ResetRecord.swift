import TetherProtocol

/// Everything the agent remembers about one client reset; a row of the state database's
/// `resets` table and an entry of `tetherctl resets`.
package struct ResetRecord: Sendable, Hashable, Codable {
    package struct HookRun: Sendable, Hashable, Codable {
        package var event: HookEvent
        package var result: HookResult
        /// Seconds since the epoch.
        package var finishedAt: Double

        package init(event: HookEvent, result: HookResult, finishedAt: Double) {
            self.event = event
            self.result = result
            self.finishedAt = finishedAt
        }
    }

    package var id: String
    package var partition: PartitionName
    package var errorCode: SyncErrorCode
    package var errorMessage: String
    /// The mode configured for the partition when the reset started.
    package var mode: ResetMode
    /// What the reset does, after the fallbacks of docs/contract.md "Reset modes".
    package var strategy: ResetStrategy
    /// Why the strategy differs from the configured mode, when it does.
    package var fallbackReason: String?
    package var phase: ResetPhase
    package var outcome: ResetOutcome
    /// `<recovery_dir>/<partition>/<UTC time>-<id>.sqlite`, chosen when the reset is recorded.
    package var backupPath: String
    package var startedAt: Double
    package var finishedAt: Double?
    package var hooks: [HookRun]
    /// Unsynced changes replayed onto the server's state (recover) and dropped by the rules.
    package var recoveredChanges: Int?
    package var droppedChanges: Int?
    /// Changes the server wrote from this reset's view when healing a restore (0: it did not
    /// want the view, or refused it; nil: the reset did not offer its view).
    package var healedChanges: Int?
    /// Whether the server may have been healing when this reset offered its view (it took the
    /// view, declined it as covered by newer ones, or the offer was refused or not made before
    /// the server could say it wants none): the rewrite then keeps the unsynced updates and
    /// deletes of rows the server's state lacks, which another view may bring back
    /// (docs/client-reset.md, "Healing a restored server").
    package var viewContributed: Bool?
    /// How often the healing phase went back to fetching (another view healed meanwhile, or the
    /// server forgot the fetched identity); past ``ClientResetExecutor/maxHealRebases`` the reset
    /// goes on without healing.
    package var healRebases: Int?
    /// Set when the backup file was removed because `keep_backups` newer ones exist.
    package var backupRemoved: Bool = false
    /// Set for a store quarantined because it was corrupt or not SQLite: `backupPath` is then
    /// the quarantined file itself, which is never removed (docs/client-reset.md).
    package var quarantineReason: String?

    /// The server version the rewrite brought the store to (nil until the rewrite, and for a
    /// delete-store, which empties it).
    package var resultServerVersion: Int64?
    /// Set once a bind succeeded after this reset: the server accepted the store it produced.
    /// A reset-causing error before that is a repeat (``ResetLoopGuard``).
    package var confirmedByBind: Bool?
    /// How many resets before this one ended without a successful bind in between (0: none).
    package var loopRepeats: Int?
    /// Set when no new backup was written because the store had not changed since reset
    /// `backupReusedFrom` finished: `backupPath` is that reset's backup (docs/client-reset.md).
    package var backupReusedFrom: String?

    /// Set for a reset of a store restored from an older copy or synced from two places
    /// (errors 209 and 210, docs/client-reset.md "Restored and cloned devices").
    package var cause: LineageCause?
    /// The store's client file id when the reset started (nil: none, or a record written before
    /// this field): a store that carries another identity before the rewrite has moved on
    /// since, and the record is stale (a state database restored from an older copy). Ids are
    /// never reused; the salt is not kept here (records are shown by `tetherctl resets`).
    package var storeClientFile: Int64?

    /// True for the record of a quarantined store.
    package var isQuarantine: Bool { quarantineReason != nil }

    /// A reset just recorded, for `error` (its code and message are kept).
    package init(
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
