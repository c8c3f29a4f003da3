import TetherProtocol

/// Which local changes a reset in place replays onto the server's state (docs/contract.md: Recovery rules).
package enum RecoverySource: Sendable, Equatable {
    /// The store's change log as it is inside the rewrite's transaction. Reading it there, not
    /// before, matters: an application may commit while the reset fetches the server's state,
    /// and that change must be replayed, not cleared with the log.
    case pendingChanges
    /// Exactly these changes (e.g. taken from a backup).
    case changes([RowChange])
}
