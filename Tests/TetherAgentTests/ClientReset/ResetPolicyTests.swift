import Testing
import TetherAgent
import TetherProtocol

private let diverging = SyncError(.divergingHistories, "restored")
private let noRecovery = SyncError(.divergingHistories, "restored", action: .clientResetNoRecovery)
private let breaking = SyncError(.badSchemaVersion, "schema 1 no longer accepted")
private let denied = SyncError(.permissionDenied, "revoked")

@Test(arguments: [
    // (mode, error, cycle, expected strategy, falls back)
    (ResetMode.recoverUnsyncedChanges, diverging, false, ResetStrategy.recover, false),
    (.recoverUnsyncedChanges, noRecovery, false, .manual, true),
    (.recoverUnsyncedChanges, breaking, false, .manual, true),
    (.recoverUnsyncedChanges, diverging, true, .manual, true),
    (.recoverUnsyncedChanges, denied, false, .deleteStore, false),
    (.recoverOrDiscardUnsyncedChanges, diverging, false, .recover, false),
    (.recoverOrDiscardUnsyncedChanges, noRecovery, false, .discard, true),
    (.recoverOrDiscardUnsyncedChanges, breaking, false, .manual, true),
    (.recoverOrDiscardUnsyncedChanges, diverging, true, .manual, true),
    (.recoverOrDiscardUnsyncedChanges, denied, false, .deleteStore, false),
    (.discardUnsyncedChanges, diverging, false, .discard, false),
    (.discardUnsyncedChanges, noRecovery, false, .discard, false),
    (.discardUnsyncedChanges, breaking, false, .manual, true),
    (.discardUnsyncedChanges, diverging, true, .manual, true),
    (.discardUnsyncedChanges, denied, false, .deleteStore, false),
    (.manual, diverging, false, .manual, false),
    (.manual, noRecovery, false, .manual, false),
    (.manual, breaking, false, .manual, false),
    (.manual, diverging, true, .manual, false),
    (.manual, denied, false, .deleteStore, false),
])
func fallbacksOfSpec41(mode: ResetMode, error: SyncError, cycle: Bool, expected: ResetStrategy, fallsBack: Bool) {
    let decision = ResetPolicy.decide(mode: mode, error: error, unacknowledgedReset: cycle ? "r-earlier" : nil)
    #expect(decision.strategy == expected)
    #expect((decision.fallbackReason != nil) == fallsBack, "\(decision.fallbackReason ?? "no reason")")
    if cycle && fallsBack { #expect(decision.fallbackReason?.contains("r-earlier") == true) }
}

@Test func operatorForcedResetDiscardsWhateverTheMode() {
    for mode in ResetMode.allCases {
        let decision = ResetPolicy.decide(mode: mode, error: breaking, forcedByOperator: true)
        #expect(decision.strategy == .discard)
    }
}

@Test func recoveryFailureFallback() {
    #expect(ResetPolicy.afterRecoveryFailure(mode: .recoverUnsyncedChanges) == .manual)
    #expect(ResetPolicy.afterRecoveryFailure(mode: .recoverOrDiscardUnsyncedChanges) == .discard)
}
