/// What `resetInPlace` did, in counts.
public struct ResetInPlaceReport: Sendable, Hashable {
    public var rewrite: RewriteReport
    /// Set when local changes were replayed.
    public var recovery: RecoveryReport?
    /// Log entries (unsynced local changes) the reset removed from the change log before
    /// re-queuing the recovered ones.
    public var localChangesCleared: Int
    /// Differences applied when the reset also replaced the schema.
    public var schemaDifferences: [String]
}
