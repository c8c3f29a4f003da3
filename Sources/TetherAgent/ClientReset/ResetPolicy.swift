import TetherProtocol

/// The fallbacks of docs/contract.md "Reset modes": which strategy a reset uses, given the configured mode, the
/// server's action and what the agent knows. Pure, so every combination is tested.
package enum ResetPolicy {
    package struct Decision: Sendable, Hashable {
        package var strategy: ResetStrategy
        /// Why the strategy is not what the mode alone would give; nil when it is.
        package var fallbackReason: String?
    }

    /// - Parameters:
    ///   - mode: the partition's configured mode.
    ///   - error: the error that caused the reset (its action says whether recovery is allowed).
    ///   - unacknowledgedReset: the id of an earlier reset of this store whose recovered changes
    ///     the server has not acknowledged yet (a reset cycle), if any.
    ///   - forcedByOperator: `tetherctl reset initiate` on a partition stuck in an error state.
    package static func decide(
        mode: ResetMode, error: SyncError, unacknowledgedReset: String? = nil, forcedByOperator: Bool = false
    ) -> Decision {
        if forcedByOperator {
            return Decision(strategy: .discard, fallbackReason: "forced by the operator (tetherctl reset initiate)")
        }
        if error.action == .deleteStore {
            return Decision(strategy: .deleteStore, fallbackReason: nil)
        }
        if mode == .manual {
            return Decision(strategy: .manual, fallbackReason: nil)
        }
        if error.code.forcesManualReset {
            return Decision(strategy: .manual, fallbackReason: "the server's schema changed in a breaking way (error \(error.code.rawValue))")
        }
        if let unacknowledgedReset {
            return Decision(
                strategy: .manual,
                fallbackReason: "reset cycle: reset \(unacknowledgedReset) was not yet acknowledged by the server")
        }
        let recoveryDisabled = error.action == .clientResetNoRecovery
        switch mode {
        case .recoverUnsyncedChanges:
            return recoveryDisabled
                ? Decision(strategy: .manual, fallbackReason: "client recovery is disabled on the server")
                : Decision(strategy: .recover, fallbackReason: nil)
        case .recoverOrDiscardUnsyncedChanges:
            return recoveryDisabled
                ? Decision(strategy: .discard, fallbackReason: "client recovery is disabled on the server")
                : Decision(strategy: .recover, fallbackReason: nil)
        case .discardUnsyncedChanges:
            return Decision(strategy: .discard, fallbackReason: nil)
        case .manual:
            return Decision(strategy: .manual, fallbackReason: nil)
        }
    }

    /// What the reset does when recovery turned out impossible: the recover mode falls back to
    /// manual, recover-or-discard to discarding.
    package static func afterRecoveryFailure(mode: ResetMode) -> ResetStrategy {
        mode == .recoverOrDiscardUnsyncedChanges ? .discard : .manual
    }
}
