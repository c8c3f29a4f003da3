import Testing
import TetherProtocol
import TetherStore
@testable import TetherAgent

/// Every (phase, event) pair of the partition lifecycle, then the decisions a pass makes from
/// the machine's memory (pause, stop reason, removal, the daemon's start, an operator's go).
@Suite struct PartitionStateMachineTests {
    typealias Machine = PartitionStateMachine
    typealias Phase = Machine.Phase
    typealias Event = Machine.TestInput
    typealias Action = Machine.TestAction

    static let retryError = SyncError(.otherSessionError, "try later", action: .retry, retryAfterMilliseconds: 2_000)
    static let resetError = SyncError(.badServerVersion, "restored", action: .clientReset)
    static let deleteError = SyncError(.permissionDenied, "denied", action: .deleteStore)
    static let damage = StoreError.corrupt(path: "/s.sqlite", problems: ["page 3"])
    static let manual = Machine.PendingReset(id: "r-manual", waitsForOperator: true, reason: "the partition's mode is manual")
    static let automatic = Machine.PendingReset(id: "r-auto", waitsForOperator: false)
    static let ready = Phase.syncing(Machine.SessionFacts(ready: true, caughtUp: true))

    /// A machine in `phase`, reached by the events the controller feeds.
    static func machine(in phase: Phase) -> Machine {
        var machine = Machine(paused: false)
        func feed(_ events: Event...) { for event in events { _ = machine.handle(event) } }
        switch phase {
        case .starting: break
        case .connecting: feed(.passStarted(pendingReset: nil), .bindSent)
        case .bootstrapping: feed(.passStarted(pendingReset: nil), .bindSent, .bound(stateFollows: true))
        case .syncing: feed(.passStarted(pendingReset: nil), .bindSent, .bound(stateFollows: false), .sessionReady(caughtUp: true))
        case .offline: feed(.passStarted(pendingReset: nil), .bindSent, .connectionLost)
        case .paused: feed(.pauseRequested, .passStarted(pendingReset: nil))
        case .resetPending: feed(.passStarted(pendingReset: nil), .passStarted(pendingReset: manual))
        case .resetting: feed(.passStarted(pendingReset: automatic))
        case .resetFinished: feed(.passStarted(pendingReset: automatic), .resetEnded(.done(deleteStore: false)))
        case .stopped: feed(.sessionEnded(.stop(reason: "error 105"), boundFor: nil), .passStarted(pendingReset: nil))
        case .removed: feed(.removeRequested, .passStarted(pendingReset: nil))
        }
        #expect(machine.phase == phase, "the fixture reaches \(phase)")
        return machine
    }

    static let phases: [Phase] = [
        .starting, .connecting, .bootstrapping, ready, .offline, .paused(nil), .resetPending(manual), .resetting(automatic),
        .resetFinished, .stopped(reason: "error 105"), .removed,
    ]

    /// Phases that use the session or the connection: a lost connection makes them offline.
    static let online: Set<Phase> = [.starting, .connecting, .bootstrapping, ready]

    /// `phase` once its session ended: a session's facts say it is no longer ready.
    static func ended(_ phase: Phase) -> Phase {
        guard case .syncing(var facts) = phase else { return phase }
        facts.ready = false
        return .syncing(facts)
    }

    /// `phase` once the reset it holds finished.
    static func resetFinished(_ phase: Phase) -> Phase {
        switch phase {
        case .resetting, .resetPending, .resetFinished: .resetFinished
        case .paused: .paused(nil)
        default: phase
        }
    }

    /// Each event with the rule that gives the phase and actions after it, from the phase before.
    static let rules: [(String, Event, @Sendable (Phase) -> (Phase, [Action]))] = [
        ("pause", .pauseRequested, { ($0, [.wake]) }),
        ("resume", .resumeRequested, { phase in phase == .paused(nil) ? (.connecting, [.wake]) : (phase, []) }),
        ("remove", .removeRequested, { ($0, [.wake]) }),
        ("reload", .reloaded, { phase in (phase == .stopped(reason: "error 105") ? .connecting : phase, [.wake]) }),
        ("initiate", .initiateRequested, { ($0, [.wake]) }),
        ("forced", .resetForced(id: "r-forced"), { _ in (.resetting(Machine.PendingReset(id: "r-forced", waitsForOperator: false)), [.persistStatus, .wake]) }),
        ("rebind", .rebindRequested, { ($0, [.wake]) }),
        ("lost", .connectionLost, { phase in (online.contains(phase) ? .offline : phase, []) }),
        ("bindSent", .bindSent, { _ in (.connecting, []) }),
        ("bound", .bound(stateFollows: false), { ($0, []) }),
        ("boundWithState", .bound(stateFollows: true), { _ in (.bootstrapping, []) }),
        ("ready", .sessionReady(caughtUp: false), { _ in (.syncing(Machine.SessionFacts(ready: true, caughtUp: false)), []) }),
        ("counts", .countsChanged(caughtUp: true), { ($0, []) }),
        ("endLost", .sessionEnded(.connectionLost, boundFor: nil), { phase in (online.contains(phase) ? .offline : phase, [.exit]) }),
        ("endRetry", .sessionEnded(.retry(retryError), boundFor: .seconds(5)), { phase in
            (online.contains(phase) ? .offline : phase, [.backOff(floor: .seconds(2), newSeries: false)])
        }),
        ("endRetryHealthy", .sessionEnded(.retry(nil), boundFor: .seconds(31)), { phase in
            (online.contains(phase) ? .offline : phase, [.backOff(floor: .zero, newSeries: true)])
        }),
        ("endReset", .sessionEnded(.reset(resetError, storeEmptied: false), boundFor: nil), { (ended($0), [.startReset(resetError)]) }),
        ("endResetEmptied", .sessionEnded(.reset(resetError, storeEmptied: true), boundFor: nil), { (ended($0), [.startReset(resetError)]) }),
        ("endDeleteEmptied", .sessionEnded(.reset(deleteError, storeEmptied: true), boundFor: nil), { phase in
            (online.contains(phase) ? .offline : phase, [.backOff(floor: .zero, newSeries: false)])
        }),
        ("endDelete", .sessionEnded(.reset(deleteError, storeEmptied: false), boundFor: nil), { (ended($0), [.startReset(deleteError)]) }),
        ("endStop", .sessionEnded(.stop(reason: "error 204"), boundFor: nil), { phase in
            (phase == .stopped(reason: "error 105") ? .stopped(reason: "error 204") : ended(phase), [.persistStatus])
        }),
        ("endDamaged", .sessionEnded(.storeDamaged(damage), boundFor: nil), { (ended($0), [.quarantine(damage)]) }),
        ("endAltered", .sessionEnded(.storeAltered(damage), boundFor: nil), { (ended($0), [.startAlteredStoreReset(damage)]) }),
        ("endInterrupted", .sessionEnded(.interrupted, boundFor: nil), { (ended($0), []) }),
        ("resetStarted", .resetStarted(id: "r-new"), { _ in (.resetting(Machine.PendingReset(id: "r-new", waitsForOperator: false)), []) }),
        ("resetDone", .resetEnded(.done(deleteStore: false)), { (resetFinished($0), [.resetBackoff]) }),
        ("resetDeleted", .resetEnded(.done(deleteStore: true)), { phase in
            (phase == .stopped(reason: "error 105") ? .resetFinished : resetFinished(phase), [.resetBackoff])
        }),
        ("resetWaits", .resetEnded(.waitsForOperator(manual)), { _ in (.resetPending(manual), []) }),
        ("resetFailed", .resetEnded(.failed), { ($0, [.backOff(floor: .zero, newSeries: false)]) }),
        ("resetDeferred", .resetEnded(.deferred(.seconds(10))), { phase in
            (online.contains(phase) ? .offline : phase, [.sleep(.seconds(10))])
        }),
        ("quarantineFailed", .quarantineFailed(reason: "disk full"), { phase in
            (phase == .stopped(reason: "error 105") ? .stopped(reason: "the damaged store could not be quarantined: disk full") : phase, [])
        }),
    ]

    @Test(arguments: phases)
    func everyEventInPhase(_ phase: Phase) {
        for (name, event, rule) in Self.rules {
            var machine = Self.machine(in: phase)
            let actions = machine.handle(event)
            let (expectedPhase, expectedActions) = rule(phase)
            #expect(machine.phase == expectedPhase, "\(phase)/\(name): phase")
            #expect(actions == expectedActions, "\(phase)/\(name): actions")
            Self.expectConsistent(machine, "\(phase)/\(name)")
        }
    }

    /// What the phase and the requests say agree, and no fact is held twice: a request is
    /// never set for the phase that holds its fact, the shown state has the data it implies.
    static func expectConsistent(_ machine: Machine, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let requests = machine.requests
        switch machine.phase {
        case .paused: #expect(!requests.pause, "\(what): a paused phase is not asked to pause", sourceLocation: sourceLocation)
        case .stopped: #expect(requests.stop == nil, "\(what): a stopped phase holds its own reason", sourceLocation: sourceLocation)
        case .removed: #expect(!requests.remove, "\(what): removed once", sourceLocation: sourceLocation)
        default: break
        }
        let shown = machine.shownState
        #expect(shown != .synced || machine.sessionReady, "\(what): synced only with a ready session", sourceLocation: sourceLocation)
        #expect(!machine.sessionReady || [.syncing, .synced].contains(shown), "\(what): a ready session syncs", sourceLocation: sourceLocation)
        #expect(shown != .paused || machine.isPaused, "\(what): shown paused only when paused", sourceLocation: sourceLocation)
        #expect(shown != .resetPending || machine.pendingReset != nil, "\(what): a pending reset is shown with its id", sourceLocation: sourceLocation)
        #expect(
            shown != .stopped || machine.stopReason != nil || machine.isRemoved, "\(what): stopped with a reason",
            sourceLocation: sourceLocation)
        #expect(
            machine.pendingReset == nil || [.resetPending, .resetting, .paused].contains(shown), "\(what): a reset is shown where it waits",
            sourceLocation: sourceLocation)
        #expect(
            machine.passLooksUpResets == (!machine.isPaused && !machine.isRemoved && machine.stopReason == nil), "\(what): passLooksUpResets",
            sourceLocation: sourceLocation)
    }

    @Test func aPauseDuringASessionEndsItThenThePassPausesAndAResumeBindsAgain() {
        var machine = Self.machine(in: Self.ready)
        #expect(machine.handle(.pauseRequested) == [.wake])
        #expect(machine.isPaused && machine.sessionShouldEnd && !machine.passLooksUpResets)
        #expect(machine.requests.pause, "requested: the session's phase holds no pause")
        _ = machine.handle(.sessionEnded(.interrupted, boundFor: .seconds(1)))
        #expect(machine.shownState == .syncing, "an ended session no longer shows synced")
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.waitForWake])
        #expect(machine.phase == .paused(nil))
        #expect(!machine.requests.pause, "the phase holds the pause now")
        #expect(machine.handle(.pauseRequested) == [.wake])
        #expect(!machine.requests.pause, "a second pause is not requested again")
        #expect(machine.handle(.resumeRequested) == [.wake])
        #expect(machine.phase == .connecting && !machine.isPaused)
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.bind])
    }

    @Test func aPausedPartitionKeepsShowingItsPendingResetAndAResumeRestoresIt() {
        var machine = Self.machine(in: .resetPending(Self.manual))
        _ = machine.handle(.pauseRequested)
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.waitForWake])
        #expect(machine.phase == .paused(Self.manual))
        #expect(machine.shownState == .paused && machine.pendingReset == Self.manual)
        _ = machine.handle(.resumeRequested)
        #expect(machine.phase == .resetPending(Self.manual))
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.waitForWake])
        // An automatic reset under way resumes as under way.
        var resetting = Self.machine(in: .resetting(Self.automatic))
        _ = resetting.handle(.pauseRequested)
        _ = resetting.handle(.passStarted(pendingReset: nil))
        _ = resetting.handle(.resumeRequested)
        #expect(resetting.phase == .resetting(Self.automatic))
    }

    @Test func aStopReasonIsHeldOnceAndOutlivesAPause() {
        var machine = Self.machine(in: .stopped(reason: "error 105"))
        #expect(machine.requests.stop == nil)
        _ = machine.handle(.pauseRequested)
        _ = machine.handle(.passStarted(pendingReset: nil))
        #expect(machine.phase == .paused(nil))
        #expect(machine.stopReason == "error 105" && machine.requests.stop == "error 105", "kept as a request while paused")
        _ = machine.handle(.resumeRequested)
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.waitForWake])
        #expect(machine.phase == .stopped(reason: "error 105"))
        // A reload ends the stop at once: nothing is shown stopped without a reason.
        _ = machine.handle(.reloaded)
        #expect(machine.phase == .connecting && machine.stopReason == nil)
        // A stop met during a session is a request until the next pass.
        var syncing = Self.machine(in: Self.ready)
        _ = syncing.handle(.sessionEnded(.stop(reason: "error 204"), boundFor: nil))
        #expect(syncing.stopReason == "error 204" && syncing.requests.stop == "error 204")
        _ = syncing.handle(.passStarted(pendingReset: nil))
        #expect(syncing.phase == .stopped(reason: "error 204") && syncing.requests.stop == nil)
    }

    @Test func aRemovalOutlivesTheEventsThatMoveThePhase() {
        var machine = Self.machine(in: .removed)
        _ = machine.handle(.resetForced(id: "r1"))
        #expect(machine.isRemoved && machine.requests.remove)
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.exit])
        #expect(machine.phase == .removed && !machine.requests.remove)
    }

    /// The next pass after each event, in each phase: where the requests the event left lead.
    @Test(arguments: phases)
    func theNextPassAfterEveryEvent(_ phase: Phase) {
        for (name, event, _) in Self.rules {
            var machine = Self.machine(in: phase)
            _ = machine.handle(event)
            let pending = machine.pendingReset
            let reason = machine.stopReason
            let actions = machine.handle(.passStarted(pendingReset: nil))
            let expected: (Phase, [Action])
            if phase == .removed || name == "remove" {
                expected = (.removed, [.exit])
            } else if phase == .paused(nil) && name != "resume" || name == "pause" {
                expected = (.paused(pending), [.waitForWake])
            } else if (phase == .stopped(reason: "error 105") && !["reload", "forced", "resetDeleted"].contains(name)) || name == "endStop"
                || name == "quarantineFailed"
            {
                expected = (.stopped(reason: reason ?? "none"), [.waitForWake])
            } else {
                expected = (machine.phase, [.bind])
                #expect(machine.pendingReset == nil, "\(phase)/\(name) then a pass that binds: no reset shown")
            }
            #expect(machine.phase == expected.0, "\(phase)/\(name) then a pass: phase")
            #expect(actions == expected.1, "\(phase)/\(name) then a pass: actions")
            Self.expectConsistent(machine, "\(phase)/\(name) then a pass")
        }
    }

    @Test func whatAPassDoesWithARecordedReset() {
        // At the daemon's start a reset waiting for an operator is carried out.
        var machine = Machine(paused: false)
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.driveReset(initiate: true)])
        #expect(machine.shownState == .resetting)
        // Later it waits, until `reset initiate`.
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.waitForWake])
        #expect(machine.shownState == .resetPending)
        #expect(machine.pendingReset == Self.manual)
        _ = machine.handle(.initiateRequested)
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.driveReset(initiate: true)])
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.waitForWake], "the go is used once")
        // A reset under way is driven whenever a pass sees it.
        #expect(machine.handle(.passStarted(pendingReset: Self.automatic)) == [.driveReset(initiate: false)])
        #expect(machine.pendingReset == Self.automatic)
        // A go with no reset pending is dropped, not kept for a later manual reset.
        _ = machine.handle(.initiateRequested)
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.bind])
        #expect(machine.pendingReset == nil)
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.waitForWake])
    }

    @Test func theStartIsUsedByTheFirstPassThatGetsThere() {
        // Paused at start: the start is not used up by the paused pass.
        var machine = Machine(paused: true)
        #expect(machine.shownState == .paused)
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.waitForWake])
        _ = machine.handle(.resumeRequested)
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.driveReset(initiate: true)])
        // A pass with no reset uses it up.
        var bound = Machine(paused: false)
        #expect(bound.handle(.passStarted(pendingReset: nil)) == [.bind])
        #expect(bound.handle(.passStarted(pendingReset: Self.manual)) == [.waitForWake])
    }

    @Test func pauseRemovalAForcedResetAndARebindEndTheSession() {
        for event in [Event.pauseRequested, .removeRequested, .resetForced(id: "r1"), .rebindRequested] {
            var machine = Self.machine(in: Self.ready)
            #expect(!machine.sessionShouldEnd)
            _ = machine.handle(event)
            #expect(machine.sessionShouldEnd, "\(event)")
        }
        var machine = Self.machine(in: Self.ready)
        _ = machine.handle(.resetForced(id: "r1"))
        #expect(machine.pendingReset?.id == "r1")
        _ = machine.handle(.sessionEnded(.interrupted, boundFor: .seconds(1)))
        #expect(machine.handle(.passStarted(pendingReset: Self.automatic)) == [.driveReset(initiate: false)])
        #expect(!machine.sessionShouldEnd, "the pass picked the forced reset up")
        var rebinding = Self.machine(in: Self.ready)
        _ = rebinding.handle(.rebindRequested)
        _ = rebinding.handle(.sessionEnded(.interrupted, boundFor: .seconds(1)))
        #expect(rebinding.handle(.passStarted(pendingReset: nil)) == [.bind], "a rebind binds again, no reset")
        #expect(!rebinding.sessionShouldEnd)
    }

    @Test func syncedIsShownOnlyForAReadySessionThatCaughtUp() {
        var machine = Machine(paused: false)
        #expect(machine.shownState == .connecting)
        _ = machine.handle(.passStarted(pendingReset: nil))
        _ = machine.handle(.bindSent)
        _ = machine.handle(.bound(stateFollows: true))
        _ = machine.handle(.countsChanged(caughtUp: true))
        #expect(machine.shownState == .syncing, "bootstrapping shows syncing, never synced")
        _ = machine.handle(.sessionReady(caughtUp: false))
        #expect(machine.shownState == .syncing)
        _ = machine.handle(.countsChanged(caughtUp: true))
        #expect(machine.shownState == .synced)
        _ = machine.handle(.countsChanged(caughtUp: false))
        #expect(machine.shownState == .syncing)
        _ = machine.handle(.sessionEnded(.retry(nil), boundFor: .seconds(1)))
        #expect(machine.shownState == .offline)
        #expect(!machine.sessionReady)
    }

    @Test func aStopIsRememberedUntilAReloadOrADeleteStoreThatFinished() {
        var machine = Self.machine(in: .stopped(reason: "error 105"))
        #expect(machine.stopReason == "error 105")
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.waitForWake])
        _ = machine.handle(.resetEnded(.done(deleteStore: false)))
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.waitForWake], "an ordinary reset does not clear a stop")
        _ = machine.handle(.resetEnded(.done(deleteStore: true)))
        #expect(machine.stopReason == nil)
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.bind])
        _ = machine.handle(.quarantineFailed(reason: "read-only file system"))
        #expect(machine.stopReason == "the damaged store could not be quarantined: read-only file system")
    }

    @Test func aResetThatWaitsForAnOperatorIsShownWithItsReason() {
        var machine = Self.machine(in: .resetting(Self.automatic))
        _ = machine.handle(.resetEnded(.waitsForOperator(Self.manual)))
        #expect(machine.shownState == .resetPending)
        #expect(machine.pendingReset?.reason == "the partition's mode is manual")
        _ = machine.handle(.connectionLost)
        #expect(machine.shownState == .resetPending, "a dropped connection does not hide it")
        _ = machine.handle(.initiateRequested)
        #expect(machine.handle(.passStarted(pendingReset: Self.manual)) == [.driveReset(initiate: true)])
        _ = machine.handle(.resetEnded(.done(deleteStore: false)))
        #expect(machine.pendingReset == nil)
    }
}
