import Testing
import TetherAgent
import TetherProtocol

/// The reset-loop guard, case by case (issue 22: 359 resets in 10 s after a forward restore).
@Suite struct ResetLoopGuardTests {
    let error = SyncError(.divergingHistories, "the store's version 1058 is not in the server's history")
    let limits = ResetLoopGuard.Limits()

    func done(_ id: String, startedAt: Double, finishedAt: Double, confirmed: Bool? = nil, repeats: Int? = nil) -> ResetRecord {
        var record = ResetRecord(
            id: id, partition: PartitionName("p")!, error: SyncError(.divergingHistories, "x"),
            mode: .recoverUnsyncedChanges, strategy: .recover, backupPath: "/b/\(id).sqlite", startedAt: startedAt)
        record.phase = .done
        record.outcome = .recovered
        record.finishedAt = finishedAt
        record.confirmedByBind = confirmed
        record.loopRepeats = repeats
        record.resultServerVersion = 1058
        return record
    }

    @Test func aFirstResetStartsAtOnce() {
        #expect(ResetLoopGuard.assess(error: error, records: [], now: 1000) == .start(repeats: 0))
    }

    @Test func aResetAfterASuccessfulBindIsNoRepeat() {
        let records = [done("a", startedAt: 990, finishedAt: 995, confirmed: true)]
        #expect(ResetLoopGuard.assess(error: error, records: records, now: 1000) == .start(repeats: 0))
    }

    @Test func aRepeatWaitsFromThePreviousEnd() {
        let records = [done("a", startedAt: 990, finishedAt: 995)]
        guard case .wait(let until, let repeats, let reason) = ResetLoopGuard.assess(error: error, records: records, now: 996) else {
            Issue.record("expected a wait")
            return
        }
        #expect(until == 995 + limits.firstDelay)
        #expect(repeats == 1)
        #expect(reason.contains("reset loop guard") && reason.contains("error 211") && reason.contains("version 1058"))
        #expect(ResetLoopGuard.assess(error: error, records: records, now: 995 + limits.firstDelay) == .start(repeats: 1))
    }

    @Test func eachRepeatWaitsLongerAndTheWaitIsCapped() {
        let second = [done("a", startedAt: 900, finishedAt: 990, repeats: 1)]
        guard case .wait(let until, 2, _) = ResetLoopGuard.assess(error: error, records: second, now: 991) else {
            Issue.record("expected a wait before repeat 2")
            return
        }
        #expect(until == 990 + limits.firstDelay * limits.multiplier)
        #expect(limits.delay(beforeRepeat: 1) < limits.delay(beforeRepeat: 2))
        #expect(limits.delay(beforeRepeat: 20) == limits.maximumDelay)
    }

    @Test func pastTheAutomaticRepeatsItIsAManualReset() {
        let records = [done("a", startedAt: 900, finishedAt: 990, repeats: limits.automaticRepeats)]
        guard case .manual(let repeats, let reason) = ResetLoopGuard.assess(error: error, records: records, now: 991) else {
            Issue.record("expected a manual reset")
            return
        }
        #expect(repeats == limits.automaticRepeats + 1)
        #expect(reason.hasPrefix("reset loop: error 211"))
        // An operator's reset that the server refuses again stays manual: never a loop.
        let after = [done("m", startedAt: 995, finishedAt: 996, repeats: repeats)]
        if case .manual = ResetLoopGuard.assess(error: error, records: after, now: 5000) {} else { Issue.record("expected manual again") }
    }

    @Test func aResetUnderWayOrQuarantinedDoesNotCount() {
        var running = done("a", startedAt: 990, finishedAt: 995)
        running.phase = .fetching
        #expect(ResetLoopGuard.assess(error: error, records: [running], now: 996) == .start(repeats: 0))
        var quarantine = done("q", startedAt: 999, finishedAt: 999)
        quarantine.quarantineReason = "corrupt"
        let records = [done("a", startedAt: 900, finishedAt: 950, confirmed: true), quarantine]
        #expect(ResetLoopGuard.assess(error: error, records: records, now: 1000) == .start(repeats: 0))
    }

    /// Whatever the server says, a handful of resets per minute at most: three confirmed
    /// resets in the last minute make the fourth wait for the window.
    @Test func noMoreThanAFewResetsPerMinute() {
        let records = [
            done("c", startedAt: 980, finishedAt: 981, confirmed: true), done("a", startedAt: 950, finishedAt: 951, confirmed: true),
            done("b", startedAt: 970, finishedAt: 971, confirmed: true),
        ]
        guard case .wait(let until, 0, let reason) = ResetLoopGuard.assess(error: error, records: records, now: 990) else {
            Issue.record("expected the rate limit")
            return
        }
        #expect(until == 950 + limits.window)
        #expect(reason.contains("rate limit"))
        #expect(ResetLoopGuard.assess(error: error, records: records, now: 1011) == .start(repeats: 0))
    }

    /// A loop replayed at the speed of issue 22 (a reset every 28 ms): at most 1 + the
    /// automatic repeats start before the manual fallback, however fast the server answers.
    @Test func aFastLoopIsCutAfterAFewResets() {
        var records: [ResetRecord] = []
        var now = 1000.0
        var started = 0
        for step in 0..<10_000 {
            switch ResetLoopGuard.assess(error: error, records: records, now: now) {
            case .start(let repeats):
                started += 1
                records.append(done("r\(step)", startedAt: now, finishedAt: now + 0.028, repeats: repeats))
                now += 0.028
            case .wait(let until, _, _):
                now = until
            case .manual:
                #expect(started == 1 + limits.automaticRepeats)
                #expect(now - 1000 >= limits.delay(beforeRepeat: 1) + limits.delay(beforeRepeat: 2))
                return
            }
        }
        Issue.record("the loop was never cut")
    }
}
