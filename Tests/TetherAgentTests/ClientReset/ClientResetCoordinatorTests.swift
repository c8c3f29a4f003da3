import Testing
import TetherAgent
import TetherProtocol

typealias Event = ClientResetCoordinator.Event
typealias Effect = ClientResetCoordinator.Effect

private func record(
    _ strategy: ResetStrategy, mode: ResetMode = .recoverUnsyncedChanges, error: SyncError = SyncError(.divergingHistories, "restored")
) -> ResetRecord {
    ResetRecord(
        id: "r1", partition: PartitionName("p")!, error: error,
        mode: mode, strategy: strategy, backupPath: "/var/lib/tether/recovery/p/20261122T000000Z-r1.sqlite",
        startedAt: 100)
}

/// Drives a coordinator, answering each effect with `answer`, and returns the phases entered.
private func run(
    _ coordinator: inout ClientResetCoordinator, answer: (Effect) -> Event?, limit: Int = 30
) throws -> [ResetPhase] {
    var phases: [ResetPhase] = [coordinator.record.phase]
    for step in 0..<limit {
        guard let event = answer(coordinator.effect) else { return phases }
        try coordinator.handle(event, now: 200 + Double(step))
        phases.append(coordinator.record.phase)
    }
    Issue.record("did not settle within \(limit) steps")
    return phases
}

/// Every effect succeeds; manual waits are answered with `initiated` when `initiate` is set.
private func succeed(initiate: Bool = true, recovered: Int = 3, healed: Int = 2) -> (Effect) -> Event? {
    var initiated = false
    return { (effect: Effect) -> Event? in
        switch effect {
        case .proceed: return .proceed
        case .backup: return .backupCompleted
        case .runHook(let hook): return .hookFinished(hook, .succeeded)
        case .fetchServerState: return .serverStateFetched
        case .contributeHeal: return .healFinished(healed: healed)
        case .rewrite: return .rewriteCompleted(recovered: recovered, dropped: 1)
        case .awaitOperator:
            if initiate && !initiated {
                initiated = true
                return .initiated
            }
            return nil
        case .finished: return nil
        case .quarantine: return .quarantined
        }
    }
}

@Test func automaticRecoverWalksEveryPhaseOfSpec43() throws {
    var c = ClientResetCoordinator(new: record(.recover))
    let phases = try run(&c, answer: succeed())
    // The view healed rows: the state is fetched again before the rewrite.
    #expect(phases == [.recorded, .backingUp, .beforeHook, .fetching, .healing, .fetching, .rewriting, .afterHook, .done])
    #expect(c.record.outcome == .recovered)
    #expect(c.record.recoveredChanges == 3)
    #expect(c.record.healedChanges == 2)
    #expect(c.record.droppedChanges == 1)
    #expect(c.record.finishedAt != nil)
    #expect(c.record.hooks.map(\.event) == [.beforeReset, .afterReset])
    #expect(c.afterHookOutcome == "recovered")
}

@Test func discardEndsDiscarded() throws {
    var c = ClientResetCoordinator(new: record(.discard, mode: .discardUnsyncedChanges))
    _ = try run(&c, answer: succeed())
    #expect(c.record.outcome == .discarded)
    #expect(c.record.recoveredChanges == nil)
    #expect(c.afterHookOutcome == "discarded")
}

@Test func manualWaitsForTheOperatorThenDiscards() throws {
    var c = ClientResetCoordinator(new: record(.manual, mode: .manual))
    var phases = try run(&c, answer: succeed(initiate: false))
    #expect(phases == [.recorded, .manualHook, .manualPending])
    #expect(c.record.outcome == .manualPending)
    #expect(c.effect == .awaitOperator)
    try c.handle(.initiated, now: 300)
    phases = try run(&c, answer: succeed(healed: 0))
    #expect(phases == [.backingUp, .beforeHook, .fetching, .healing, .rewriting, .afterHook, .done])
    #expect(c.record.outcome == .manualDone)
    #expect(c.record.hooks.map(\.event) == [.manualReset, .beforeReset, .afterReset])
}

@Test func deleteStoreEmptiesWithoutFetching() throws {
    var c = ClientResetCoordinator(new: record(.deleteStore))
    let phases = try run(&c, answer: succeed())
    #expect(phases == [.recorded, .manualHook, .manualPending, .backingUp, .beforeHook, .rewriting, .afterHook, .done])
    #expect(c.record.outcome == .deleted)
}

@Test func failingBeforeHookTurnsTheResetManual() throws {
    var c = ClientResetCoordinator(new: record(.recover))
    try c.handle(.proceed, now: 1)
    try c.handle(.backupCompleted, now: 2)
    try c.handle(.hookFinished(.beforeReset, .failed(exitStatus: 3)), now: 3)
    #expect(c.record.phase == .manualHook)
    #expect(c.record.strategy == .manual)
    #expect(c.record.fallbackReason == "before_hook failed (exit 3)")
    try c.handle(.hookFinished(.manualReset, nil), now: 4)
    #expect(c.record.outcome == .manualPending)
    #expect(c.record.hooks.count == 1, "no manual hook configured: nothing recorded for it")
}

@Test func beforeHookTimeoutIsAFailureToo() throws {
    var c = ClientResetCoordinator(resuming: { var r = record(.discard); r.phase = .beforeHook; return r }())
    try c.handle(.hookFinished(.beforeReset, .timedOut), now: 1)
    #expect(c.record.strategy == .manual)
    #expect(c.record.fallbackReason == "before_hook failed (timed out)")
}

@Test func failingAfterHookIsRecordedAndTheDataStaysReset() throws {
    var c = ClientResetCoordinator(resuming: { var r = record(.recover); r.phase = .afterHook; return r }())
    try c.handle(.hookFinished(.afterReset, .failed(exitStatus: 1)), now: 9)
    #expect(c.record.phase == .done)
    #expect(c.record.outcome == .recovered)
    #expect(c.record.hooks.last?.result == .failed(exitStatus: 1))
}

@Test(arguments: [
    (ResetMode.recoverUnsyncedChanges, ResetStrategy.manual, ResetPhase.manualHook),
    (.recoverOrDiscardUnsyncedChanges, .discard, .rewriting),
])
func recoveryImpossibleFallsBack(mode: ResetMode, strategy: ResetStrategy, phase: ResetPhase) throws {
    var c = ClientResetCoordinator(resuming: { var r = record(.recover, mode: mode); r.phase = .rewriting; return r }())
    try c.handle(.recoveryImpossible(reason: "column dropped"), now: 1)
    #expect(c.record.strategy == strategy)
    #expect(c.record.phase == phase)
    #expect(c.record.fallbackReason == "recovery impossible: column dropped")
    if phase == .rewriting { #expect(c.effect == .rewrite(.discard)) }
}

@Test func transientFailuresRepeatThePhase() throws {
    for phase in [ResetPhase.backingUp, .fetching, .healing, .rewriting, .quarantining] {
        var c = ClientResetCoordinator(resuming: { var r = record(.recover); r.phase = phase; return r }())
        let before = c.effect
        try c.handle(.effectFailed(reason: "disk full"), now: 1)
        #expect(c.record.phase == phase)
        #expect(c.effect == before)
        #expect(c.lastFailure == "disk full")
    }
}

/// After a crash the persisted record alone decides what runs next: the same effect, with the
/// same backup path and the same reset id.
@Test func resumingRedoesThePersistedPhase() throws {
    for strategy in [ResetStrategy.recover, .discard, .manual, .deleteStore] {
        var c = ClientResetCoordinator(new: record(strategy))
        var seen = 0
        for _ in 0..<20 {
            let resumed = ClientResetCoordinator(resuming: c.record)
            #expect(resumed.effect == c.effect)
            #expect(resumed.record.backupPath == c.record.backupPath)
            #expect(resumed.record.id == "r1")
            guard let event = succeed()(c.effect) else { break }
            try c.handle(event, now: 1)
            seen += 1
        }
        #expect(seen >= 5)
    }
}

/// Every (phase, event) pair outside the transition table is refused and changes nothing.
@Test func everyOtherTransitionIsRefused() {
    let events: [Event] = [
        .proceed, .backupCompleted, .hookFinished(.beforeReset, .succeeded), .hookFinished(.afterReset, .succeeded),
        .hookFinished(.manualReset, .succeeded), .serverStateFetched, .rewriteCompleted(recovered: 0, dropped: 0),
        .recoveryImpossible(reason: "x"), .initiated, .effectFailed(reason: "x"), .serverStateLost, .fetchRefused(reason: "x"),
        .quarantined, .healFinished(healed: 0), .healRebase,
    ]
    let valid: Set<String> = [
        "recorded/proceed", "manual-hook/hookFinished(manualReset)", "manual-pending/initiated",
        "backing-up/backupCompleted", "backing-up/effectFailed", "before-hook/hookFinished(beforeReset)",
        "fetching/serverStateFetched", "fetching/effectFailed", "fetching/fetchRefused", "rewriting/rewriteCompleted",
        "rewriting/recoveryImpossible", "rewriting/effectFailed", "rewriting/serverStateLost", "after-hook/hookFinished(afterReset)",
        "quarantining/quarantined", "quarantining/effectFailed",
        "healing/healFinished", "healing/healRebase", "healing/effectFailed", "healing/serverStateLost",
    ]
    func name(_ e: Event) -> String {
        switch e {
        case .hookFinished(let hook, _): "hookFinished(\(hook == .beforeReset ? "beforeReset" : hook == .afterReset ? "afterReset" : "manualReset"))"
        default: String(describing: e).prefix { $0 != "(" }.description
        }
    }
    var refused = 0
    for phase in ResetPhase.allCases {
        for event in events {
            var r = record(.recover)
            r.phase = phase
            var c = ClientResetCoordinator(resuming: r)
            let key = "\(phase.rawValue)/\(name(event))"
            do {
                try c.handle(event, now: 1)
                #expect(valid.contains(key), "\(key) should be refused")
            } catch {
                #expect(!valid.contains(key), "\(key) should be accepted")
                #expect(c.record == r, "a refused event changes nothing")
                refused += 1
            }
        }
    }
    #expect(refused == ResetPhase.allCases.count * events.count - valid.count)
}

/// A repeated reset of an unchanged store reuses the previous backup: backing-up proceeds
/// without a copy (and only then), everything else is as for any reset.
@Test func aReusedBackupProceedsWithoutACopy() throws {
    var reusing = record(.recover)
    reusing.backupReusedFrom = "r0"
    var c = ClientResetCoordinator(new: reusing)
    var effects: [Effect] = []
    let phases = try run(&c) { effect in
        effects.append(effect)
        return succeed(healed: 0)(effect)
    }
    #expect(phases == [.recorded, .backingUp, .beforeHook, .fetching, .healing, .rewriting, .afterHook, .done])
    #expect(!effects.contains { if case .backup = $0 { true } else { false } })
    // Without a reused backup, proceeding while backing up is refused.
    var plain = record(.recover)
    plain.phase = .backingUp
    var refusing = ClientResetCoordinator(resuming: plain)
    #expect(throws: ClientResetCoordinator.InvalidTransition.self) { try refusing.handle(.proceed, now: 1) }
    #expect(refusing.record == plain)
}

@Test func theRewriteRecordsTheServerVersionTheStoreNowHas() throws {
    var c = ClientResetCoordinator(new: record(.discard))
    _ = try run(&c) { effect in
        if case .rewrite = effect { return .rewriteCompleted(recovered: 0, dropped: 0, serverVersion: 42) }
        return succeed()(effect)
    }
    #expect(c.record.resultServerVersion == 42)
    #expect(c.record.phase == .done)
}

/// Access denied (or a fatal error) while fetching: retrying cannot help, so the reset waits
/// for an operator with the server's answer as its reason, instead of retrying for ever. It
/// keeps its strategy: initiated once access is back, a recovering reset recovers (it used to
/// become a manual reset and discard the unsynced changes into the backup).
@Test(arguments: [ResetStrategy.recover, .discard])
func aRefusedFetchWaitsForAnOperatorAndKeepsItsStrategy(strategy: ResetStrategy) throws {
    var c = ClientResetCoordinator(new: record(strategy))
    let phases = try run(&c) { effect in
        if case .fetchServerState = effect { return .fetchRefused(reason: "error 206 (permission_denied): no grant") }
        return succeed(initiate: false)(effect)
    }
    #expect(phases == [.recorded, .backingUp, .beforeHook, .fetching, .manualHook, .manualPending])
    #expect(c.record.strategy == strategy)
    #expect(c.record.fallbackReason == "the server refused to send its state: error 206 (permission_denied): no grant")
    #expect(c.record.outcome == .manualPending)
    let resumed = try run(&c, answer: succeed())
    #expect(resumed.dropFirst().first == .backingUp && c.record.phase == .done, "\(resumed)")
    #expect(c.record.outcome == (strategy == .recover ? .recovered : .discarded))
}

/// A damaged store goes through the coordinator: recorded in phase quarantining, its effect
/// moves the store to the backup path, then done and discarded; a restart moves it again.
@Test func aQuarantineMovesTheStoreThenEndsDiscarded() throws {
    var damaged = record(.discard)
    damaged.quarantineReason = "SQLite error 11"
    var c = ClientResetCoordinator(quarantine: damaged)
    #expect(c.record.phase == .quarantining)
    #expect(c.effect == .quarantine(path: damaged.backupPath))
    #expect(ClientResetCoordinator(resuming: c.record).effect == c.effect, "a restart moves it again")
    try c.handle(.effectFailed(reason: "read-only file system"), now: 1)
    #expect(c.record.phase == .quarantining)
    try c.handle(.quarantined, now: 2)
    #expect(c.record.phase == .done)
    #expect(c.record.outcome == .discarded)
    #expect(c.record.finishedAt == 2)
    #expect(c.effect == .finished)
    // A record an earlier version wrote (phase done, outcome in-progress) is resumed as one.
    var legacy = damaged
    legacy.phase = .done
    #expect(ClientResetCoordinator(quarantine: legacy).effect == .quarantine(path: damaged.backupPath))
}

// MARK: Healing (a reset caused by a restored server offers its view)

/// 211 and 208 mean the server was restored, 209 and 210 that the store went back in time or
/// was copied (it may hold a window a restore lost, and must learn whether a heal is open): the
/// reset heals between fetching and rewriting. Other causes go straight to rewriting.
@Test(arguments: [
    (SyncErrorCode.divergingHistories, true), (.badClientFileIdentifier, true), (.badServerVersion, true), (.badClientVersion, true),
    (.badClientFile, false), (.clientFileExpired, false),
])
func onlyAResetCausedByARestoreHeals(code: SyncErrorCode, heals: Bool) throws {
    for strategy in [ResetStrategy.recover, .discard] {
        var c = ClientResetCoordinator(new: record(strategy, error: SyncError(code, "x")))
        let phases = try run(&c, answer: succeed())
        #expect(phases.contains(.healing) == heals, "\(code) \(strategy)")
        #expect(c.record.healedChanges == (heals ? 2 : nil))
        #expect(c.record.phase == .done)
    }
}

/// A delete-store never fetches, so it never heals, whatever the error.
@Test func aDeleteStoreNeverHeals() throws {
    var c = ClientResetCoordinator(new: record(.deleteStore, error: SyncError(.divergingHistories, "x")))
    let phases = try run(&c, answer: succeed())
    #expect(!phases.contains(.healing))
    #expect(c.record.healedChanges == nil)
}

private func healing(_ strategy: ResetStrategy = .recover) -> ClientResetCoordinator {
    ClientResetCoordinator(resuming: { var r = record(strategy); r.phase = .healing; return r }())
}

@Test func healingFinishedRecordsTheCountAndRewrites() throws {
    var c = healing()
    #expect(c.effect == .contributeHeal)
    try c.handle(.healFinished(healed: 0), now: 1)
    #expect(c.record.phase == .rewriting)
    #expect(c.record.healedChanges == 0)
    #expect(c.effect == .rewrite(.recover))
}

/// A view that healed rows changed the server's state after the fetch: the state is fetched
/// again (so the rewrite puts the healed rows in the store at once), and not offered again.
@Test func aViewThatHealedRowsFetchesTheStateAgainThenRewrites() throws {
    var c = healing()
    try c.handle(.healFinished(healed: 7, contributed: true), now: 1)
    #expect(c.record.phase == .fetching)
    #expect(c.effect == .fetchServerState)
    #expect(c.record.healedChanges == 7 && c.record.viewContributed == true)
    try c.handle(.serverStateFetched, now: 2)
    #expect(c.record.phase == .rewriting)
    #expect(c.effect == .rewrite(.recover))
    #expect(c.record.healedChanges == 7 && c.record.viewContributed == true)
}

@Test func aHealRebaseFetchesAgainThenHealsAgain() throws {
    var c = healing(.discard)
    try c.handle(.healRebase, now: 1)
    #expect(c.record.phase == .fetching)
    #expect(c.record.healedChanges == nil)
    try c.handle(.serverStateFetched, now: 2)
    #expect(c.record.phase == .healing)
    #expect(c.effect == .contributeHeal)
}

@Test func theStagedStateLostWhileHealingFetchesAgain() throws {
    var c = healing()
    try c.handle(.serverStateLost, now: 1)
    #expect(c.record.phase == .fetching)
    #expect(c.effect == .fetchServerState)
}

@Test func aTransientHealingFailureRepeatsHealing() throws {
    var c = healing()
    try c.handle(.effectFailed(reason: "server unreachable"), now: 1)
    #expect(c.record.phase == .healing)
    #expect(c.effect == .contributeHeal)
    #expect(c.lastFailure == "server unreachable")
    try c.handle(.healFinished(healed: 1), now: 2)
    #expect(c.lastFailure == nil)
}

/// After a restart the persisted phase healing contributes again (same reset id, so the same
/// contribution); a heal already finished is not redone when the rewrite resumes.
@Test func resumingAPersistedHealingPhaseContributesAgain() throws {
    var c = ClientResetCoordinator(new: record(.recover))
    _ = try run(&c) { effect in effect == .contributeHeal ? nil : succeed()(effect) }
    #expect(c.record.phase == .healing)
    var resumed = ClientResetCoordinator(resuming: c.record)
    #expect(resumed.effect == .contributeHeal)
    #expect(resumed.record.id == "r1")
    let phases = try run(&resumed, answer: succeed(healed: 5))
    #expect(phases == [.healing, .fetching, .rewriting, .afterHook, .done])
    #expect(resumed.record.healedChanges == 5)
    var rewriting = resumed.record
    rewriting.phase = .rewriting
    #expect(ClientResetCoordinator(resuming: rewriting).effect == .rewrite(.recover))
}

/// A rewrite that finds the staged state gone after healing fetches it again and rewrites:
/// the heal is finished and not offered again.
@Test func aRewriteThatLostTheStateAfterHealingFetchesAgainWithoutHealingAgain() throws {
    var c = healing()
    try c.handle(.healFinished(healed: 0), now: 1)
    #expect(c.record.phase == .rewriting)
    try c.handle(.serverStateLost, now: 2)
    #expect(c.record.phase == .fetching)
    try c.handle(.serverStateFetched, now: 3)
    #expect(c.record.phase == .rewriting)
    #expect(c.record.healedChanges == 0)
}
