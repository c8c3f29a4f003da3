/// How a reset ended, as `tetherctl resets` shows it (docs/contract.md: tetherctl).
package enum ResetOutcome: String, Sendable, Hashable, Codable, CaseIterable {
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
