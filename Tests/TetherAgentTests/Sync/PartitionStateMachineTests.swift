import Testing
import TetherProtocol
import TetherStore
@testable import TetherAgent

/// Every (phase, event) pair of the partition lifecycle, then the decisions a pass makes from
/// the machine's memory (pause, stop reason, removal, the daemon's start, an operator's go).
@Suite struct PartitionStateMachineTests {
    typealias Machine = PartitionStateMachine
    typealias Phase = Machine.Phase

    static let retryError = SyncError(.otherSessionError, "try later", action: .retry, retryAfterMilliseconds: 2_000)
    static let resetError = SyncError(.badServerVersion, "restored", action: .clientReset)
    static let deleteError = SyncError(.permissionDenied, "denied", action: .deleteStore)
    static let damage = StoreError.corrupt(path: "/s.sqlite", problems: ["page 3"])
    static let manual = Machine.PendingReset(id: "r-manual", waitsForOperator: true, reason: "the partition's mode is manual")
    static let automatic = Machine.PendingReset(id: "r-auto", waitsForOperator: false)

    /// A machine in `phase`, reached by the events the controller feeds.
    static func machine(in phase: Phase) -> Machine {
        var machine = Machine(paused: false)
        func feed(_ events: Machine.Event...) { for event in events { _ = machine.handle(event) } }
        switch phase {
        case .starting: break
        case .connecting: feed(.passStarted(pendingReset: nil), .bindSent)
        case .bootstrapping: feed(.passStarted(pendingReset: nil), .bindSent, .bound(stateFollows: true))
        case .syncing: feed(.passStarted(pendingReset: nil), .bindSent, .bound(stateFollows: false), .sessionReady(caughtUp: true))
        case .offline: feed(.passStarted(pendingReset: nil), .bindSent, .connectionLost)
        case .paused: feed(.pauseRequested, .passStarted(pendingReset: nil))
        case .resetPending: feed(.passStarted(pendingReset: nil), .passStarted(pendingReset: manual))
        case .resetting: feed(.passStarted(pendingReset: automatic))
        case .stopped: feed(.sessionEnded(.stop(reason: "error 105"), boundFor: nil), .passStarted(pendingReset: nil))
        case .removed: feed(.removeRequested, .passStarted(pendingReset: nil))
        }
        #expect(machine.phase == phase, "the fixture reaches \(phase)")
        return machine
    }

    static let phases: [Phase] = [
        .starting, .connecting, .bootstrapping, .syncing, .offline, .paused, .resetPending, .resetting, .stopped, .removed,
    ]

    /// Phases that use the session or the connection: a lost connection makes them offline.
    static let online: Set<Phase> = [.starting, .connecting, .bootstrapping, .syncing]

    /// Each event with the rule that gives the phase and actions after it, from the phase before.
    static let rules: [(String, Machine.Event, @Sendable (Phase) -> (Phase, [Machine.Action]))] = [
        ("pause", .pauseRequested, { ($0, [.wake]) }),
        ("resume", .resumeRequested, { phase in phase == .paused ? (.connecting, [.wake]) : (phase, []) }),
        ("remove", .removeRequested, { ($0, [.wake]) }),
        ("reload", .reloaded, { ($0, [.wake]) }),
        ("initiate", .initiateRequested, { ($0, [.wake]) }),
        ("forced", .resetForced(id: "r-forced"), { _ in (.resetting, [.persistStatus, .wake]) }),
        ("lost", .connectionLost, { phase in (online.contains(phase) ? .offline : phase, []) }),
        ("bindSent", .bindSent, { _ in (.connecting, []) }),
        ("bound", .bound(stateFollows: false), { ($0, []) }),
        ("boundWithState", .bound(stateFollows: true), { _ in (.bootstrapping, []) }),
        ("ready", .sessionReady(caughtUp: false), { _ in (.syncing, []) }),
        ("counts", .countsChanged(caughtUp: true), { ($0, []) }),
        ("endLost", .sessionEnded(.connectionLost, boundFor: nil), { phase in (online.contains(phase) ? .offline : phase, [.exit]) }),
        ("endRetry", .sessionEnded(.retry(retryError), boundFor: .seconds(5)), { phase in
            (online.contains(phase) ? .offline : phase, [.backOff(floor: .seconds(2), newSeries: false)])
        }),
        ("endRetryHealthy", .sessionEnded(.retry(nil), boundFor: .seconds(31)), { phase in
            (online.contains(phase) ? .offline : phase, [.backOff(floor: .zero, newSeries: true)])
        }),
        ("endReset", .sessionEnded(.reset(resetError, storeEmptied: false), boundFor: nil), { ($0, [.startReset(resetError)]) }),
        ("endResetEmptied", .sessionEnded(.reset(resetError, storeEmptied: true), boundFor: nil), { ($0, [.startReset(resetError)]) }),
        ("endDeleteEmptied", .sessionEnded(.reset(deleteError, storeEmptied: true), boundFor: nil), { phase in
            (online.contains(phase) ? .offline : phase, [.backOff(floor: .zero, newSeries: false)])
        }),
        ("endDelete", .sessionEnded(.reset(deleteError, storeEmptied: false), boundFor: nil), { ($0, [.startReset(deleteError)]) }),
        ("endStop", .sessionEnded(.stop(reason: "error 204"), boundFor: nil), { ($0, [.persistStatus]) }),
        ("endDamaged", .sessionEnded(.storeDamaged(damage), boundFor: nil), { ($0, [.quarantine(damage)]) }),
        ("endAltered", .sessionEnded(.storeAltered(damage), boundFor: nil), { ($0, [.startAlteredStoreReset(damage)]) }),
        ("endInterrupted", .sessionEnded(.interrupted, boundFor: nil), { ($0, []) }),
        ("resetStarted", .resetStarted(id: "r-new"), { _ in (.resetting, []) }),
        ("resetDone", .resetEnded(.done(deleteStore: false)), { ($0, [.resetBackoff]) }),
        ("resetDeleted", .resetEnded(.done(deleteStore: true)), { ($0, [.resetBackoff]) }),
        ("resetWaits", .resetEnded(.waitsForOperator(manual)), { _ in (.resetPending, []) }),
        ("resetFailed", .resetEnded(.failed), { ($0, [.backOff(floor: .zero, newSeries: false)]) }),
        ("resetDeferred", .resetEnded(.deferred(.seconds(10))), { phase in
            (online.contains(phase) ? .offline : phase, [.sleep(.seconds(10))])
        }),
        ("quarantineFailed", .quarantineFailed(reason: "disk full"), { ($0, [.persistStatus]) }),
    ]

    @Test(arguments: phases)
    func everyEventInPhase(_ phase: Phase) {
        for (name, event, rule) in Self.rules {
            var machine = Self.machine(in: phase)
            let actions = machine.handle(event)
            let (expectedPhase, expectedActions) = rule(phase)
            #expect(machine.phase == expectedPhase, "\(phase)/\(name): phase")
            #expect(actions == expectedActions, "\(phase)/\(name): actions")
        }
    }

    /// The next pass after each event, in each phase: where the memory the event left leads.
    @Test(arguments: phases)
    func theNextPassAfterEveryEvent(_ phase: Phase) {
        for (name, event, _) in Self.rules {
            var machine = Self.machine(in: phase)
            _ = machine.handle(event)
            let actions = machine.handle(.passStarted(pendingReset: nil))
            let expected: (Phase, [Machine.Action])
            if phase == .removed || name == "remove" {
                expected = (.removed, [.exit])
            } else if phase == .paused && name != "resume" || name == "pause" {
                expected = (.paused, [.waitForWake])
            } else if (phase == .stopped && !["reload", "forced", "resetDeleted"].contains(name)) || name == "endStop"
                || name == "quarantineFailed"
            {
                expected = (.stopped, [.waitForWake])
            } else {
                expected = (machine.phase, [.bind])
            }
            #expect(machine.phase == expected.0, "\(phase)/\(name) then a pass: phase")
            #expect(actions == expected.1, "\(phase)/\(name) then a pass: actions")
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

    @Test func pauseRemovalAndAForcedResetEndTheSession() {
        for event in [Machine.Event.pauseRequested, .removeRequested, .resetForced(id: "r1")] {
            var machine = Self.machine(in: .syncing)
            #expect(!machine.sessionShouldEnd)
            _ = machine.handle(event)
            #expect(machine.sessionShouldEnd, "\(event)")
        }
        var machine = Self.machine(in: .syncing)
        _ = machine.handle(.resetForced(id: "r1"))
        #expect(machine.pendingReset?.id == "r1")
        _ = machine.handle(.sessionEnded(.interrupted, boundFor: .seconds(1)))
        #expect(machine.handle(.passStarted(pendingReset: Self.automatic)) == [.driveReset(initiate: false)])
        #expect(!machine.sessionShouldEnd, "the pass picked the forced reset up")
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
        var machine = Self.machine(in: .stopped)
        #expect(machine.stoppedReason == "error 105")
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.waitForWake])
        _ = machine.handle(.resetEnded(.done(deleteStore: false)))
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.waitForWake], "an ordinary reset does not clear a stop")
        _ = machine.handle(.resetEnded(.done(deleteStore: true)))
        #expect(machine.stoppedReason == nil)
        #expect(machine.handle(.passStarted(pendingReset: nil)) == [.bind])
        _ = machine.handle(.quarantineFailed(reason: "read-only file system"))
        #expect(machine.stoppedReason == "the damaged store could not be quarantined: read-only file system")
    }

    @Test func aResetThatWaitsForAnOperatorIsShownWithItsReason() {
        var machine = Self.machine(in: .resetting)
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
