/// Where a client reset is. Each phase is persisted in the state database **before** its side
/// effect starts, so a restart re-enters the phase and redoes its (idempotent) effect.
package enum ResetPhase: String, Sendable, Hashable, Codable, CaseIterable {
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
    /// 4a. After 211 or 208 (a restored server): the backup's view is offered to the server,
    /// which may heal what the restore lost with it (docs/client-reset.md).
    case healing
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
