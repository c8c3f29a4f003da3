public import TetherControl

/// A client reset on its way, from its `reset-phase` and `reset-backup` events: it started
/// (`recorded`), waits for an operator (`manualPending`), or its backup of the store exists
/// (``backupPath`` set: the store as it was before the reset, which an application may open
/// read-only — Realm's `beforeReset(before)`). ``ClientResetNotice`` tells when it finished.
public struct ClientResetProgress: Sendable, Hashable {
    public var partition: String
    public var resetID: String
    /// The phase the reset entered; `backingUp` for the event that says the backup exists.
    public var phase: Tether.ResetPhase
    /// What the reset does to the store (nil from an agent that does not say).
    public var strategy: Tether.ResetStrategy?
    /// The store being reset.
    public var storePath: String?
    /// The reset's backup of the store, once it exists (nil before: the path is chosen when the
    /// reset starts, but the copy is written in `backingUp`).
    public var backupPath: String?
    /// The sync error that caused the reset.
    public var code: Int?
    /// The event it was read from.
    public var event: AgentEvent

    /// Whether this is the reset's start.
    public var isStart: Bool { phase == .recorded && event.event == .resetPhase }
    /// Whether this says the backup exists now (the `reset-backup` event).
    public var isBackupReady: Bool { event.event == .resetBackup }

    /// The progress a `reset-phase` or `reset-backup` event stands for; nil for any other.
    public init?(_ event: AgentEvent) {
        guard let phase = event.resetPhase, let partition = event.partition, let resetID = event.resetID else { return nil }
        self.partition = partition
        self.resetID = resetID
        self.phase = phase
        self.strategy = event.resetStrategy
        self.storePath = event.storePath
        self.backupPath = event.event == .resetBackup || phase.backupExists ? event.backupPath : nil
        self.code = event.code
        self.event = event
    }
}
