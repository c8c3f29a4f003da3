/// What `resetInPlace` did, in counts.
package struct ResetInPlaceReport: Sendable, Hashable {
    package var rewrite: RewriteReport
    /// Set when local changes were replayed.
    package var recovery: RecoveryReport?
    /// Log entries (unsynced local changes) the reset removed from the change log before
    /// re-queuing the recovered ones.
    package var localChangesCleared: Int
    /// Differences applied when the reset also replaced the schema.
    package var schemaDifferences: [String]
}
