/// The hooks of docs/contract.md "Reset hooks", and the error hook (docs/events.md).
package enum HookEvent: String, Sendable, Hashable, Codable, CaseIterable {
    case beforeReset = "before-reset"
    case afterReset = "after-reset"
    case manualReset = "manual-reset"
    /// `[events] error_hook`: runs for sync errors, beside sync, never as a reset step.
    case syncError = "sync-error"
}
