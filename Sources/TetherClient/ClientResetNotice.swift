public import TetherControl

/// A client reset that finished: where the store is, and where the agent kept its copy from
/// before the reset — Realm's `afterReset(before, after)`, as two SQLite files an application
/// can open (read-only, for the copy) and compare.
public struct ClientResetNotice: Sendable, Hashable {
    public var partition: String
    public var resetID: String
    /// `recovered`, `discarded`, `manual-done`, `deleted` or `superseded` (docs/events.md).
    public var outcome: String
    /// ``outcome`` as an enum.
    public var resetOutcome: Tether.ResetOutcome { Tether.ResetOutcome(rawValue: outcome) }
    /// The store before the reset: the backup the agent kept (`recovery_dir`).
    public var before: String
    /// The store now, reset.
    public var after: String
    /// The sync error that caused the reset.
    public var code: Int?
    /// The event it was read from.
    public var event: AgentEvent

    /// The notice a `reset-outcome` event with both paths stands for; nil for any other event
    /// (and for a reset that changed nothing: `superseded`).
    public init?(_ event: AgentEvent) {
        guard event.event == .resetOutcome, let partition = event.partition, let resetID = event.resetID,
            let outcome = event.outcome, outcome != "superseded", let before = event.backupPath, let after = event.storePath
        else { return nil }
        self.partition = partition
        self.resetID = resetID
        self.outcome = outcome
        self.before = before
        self.after = after
        self.code = event.code
        self.event = event
    }
}
