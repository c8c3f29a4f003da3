/// Where a client reset is. Each phase is persisted in the state database **before** its side
/// effect starts, so a restart re-enters the phase and redoes its (idempotent) effect.
public enum ResetPhase: String, Sendable, Hashable, Codable, CaseIterable {
    /// 1. Recorded (id, partition, error, mode); nothing done yet.
    case recorded
    /// Manual or delete-store: the manual hook runs (backup path already chosen).
    case manualHook = "manual-hook"
    /// Manual or delete-store: waiting for `tetherctl reset initiate` or the next start.
    case manualPending = "manual-pending"
    /// 2. Online backup to the recorded backup path.
    case backingUp = "backing-up"
    /// 3. The before hook runs.
    case beforeHook = "before-hook"
    /// 4. The server's current state is fetched (as a new device identity).
    case fetching
    /// 5. The live store is rewritten in place in one transaction (and local changes replayed).
    case rewriting
    /// 6. The after hook runs.
    case afterHook = "after-hook"
    /// 7. Finished; sync resumes.
    case done
    /// A store that is corrupt or not SQLite is moved to its backup path (quarantined); then
    /// done, and the partition bootstraps again (docs/client-reset.md).
    case quarantining
}

/// How a reset ended, as `tetherctl resets` shows it (docs/contract.md: tetherctl).
public enum ResetOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    case inProgress = "in-progress"
    case recovered
    case discarded
    case manualPending = "manual-pending"
    case manualDone = "manual-done"
    case deleted
    /// Never carried out: the record was stale, the store had moved on to another identity
    /// (a state database restored from an older copy, docs/client-reset.md).
    case superseded
}

/// What the reset does to the store when it gets to rewrite it.
public enum ResetStrategy: String, Sendable, Hashable, Codable {
    /// Server state plus unsynced changes replayed by the recovery rules (docs/contract.md: Recovery rules).
    case recover
    /// Server state; unsynced changes stay only in the backup.
    case discard
    /// Manual reset: waits for an operator, then discards (unsynced changes stay in the backup).
    case manual
    /// Permission denied: waits like a manual reset, then empties the store.
    case deleteStore = "delete-store"
}

/// The hooks of docs/contract.md "Reset hooks", and the error hook (docs/events.md).
public enum HookEvent: String, Sendable, Hashable, Codable, CaseIterable {
    case beforeReset = "before-reset"
    case afterReset = "after-reset"
    case manualReset = "manual-reset"
    /// `[events] error_hook`: runs for sync errors, beside sync, never as a reset step.
    case syncError = "sync-error"
}

/// How one hook run ended.
public enum HookResult: Sendable, Hashable, Codable {
    case succeeded
    case failed(exitStatus: Int32)
    case killedBySignal(Int32)
    case timedOut
    /// The hook could not be started (missing, refused, exec failed).
    case notStarted(reason: String)

    public var isSuccess: Bool { self == .succeeded }

    public var summary: String {
        switch self {
        case .succeeded: "exit 0"
        case .failed(let status): "exit \(status)"
        case .killedBySignal(let signal): "killed by signal \(signal)"
        case .timedOut: "timed out"
        case .notStarted(let reason): "not started: \(reason)"
        }
    }
}
