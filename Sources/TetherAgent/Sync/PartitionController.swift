import Foundation
import Logging
import TetherSyncClient
import TetherControl
import TetherProtocol
import TetherStore

/// One configured partition: performs what its ``PartitionStateMachine`` decides — binds its
/// session, applies downloads, uploads commits, drives its client resets and quarantines — and
/// feeds back what happened. Runs inside the agent's connection; everything mutable is in this
/// actor, and the lifecycle itself only in the machine.
actor PartitionController {
    typealias Event = PartitionStateMachine.Event
    typealias Action = PartitionStateMachine.Action

    private(set) var settings: PartitionSettings
    let context: any AgentContext
    var store: PartitionStore?
    private(set) var machine: PartitionStateMachine
    /// The figures, status events, error announcements and status row (``PartitionReporter``).
    var reporter: PartitionReporter
    var backoff: Backoff
    /// Wakes a controller that waits (paused, stopped, reset pending, backing off) and ends a
    /// session the machine says must end.
    private let wakeSignal = WakeSignal()
    /// Signalled when a session becomes ready: its uploads start.
    let readySignal = WakeSignal()
    /// Every change of ``status`` (for `wait-synced`).
    nonisolated let statusChanges: StatusChanges
    /// Set while an event is being handled, for the watchdog (a wedged session stops pings).
    var busySince: ContinuousClock.Instant?
    var lastProgress = ContinuousClock.now
    /// The bind under way, from its request to the session's end (nil between sessions).
    var session: PartitionSession?
    /// Whether binds keep meeting 108 (the identity bound in another session); spans binds.
    var boundElsewhere = BoundElsewhereWatch()
    /// Whether the last reset still waits for a bind to confirm it (nil: not looked up yet).
    var resetAwaitingBind: Bool?
    let log: Logger

    /// `persisted`: the partition's row of the state database (pause and last error survive a
    /// restart; a stop reason does not: a start retries, as a reload does).
    init(settings: PartitionSettings, context: any AgentContext, persisted: PartitionStatusRow, backoff: Backoff = Backoff()) {
        self.settings = settings
        self.context = context
        self.machine = PartitionStateMachine(paused: persisted.paused)
        self.backoff = backoff
        var log = context.logger
        log[metadataKey: "tether.partition"] = .string(settings.name.rawValue)
        self.log = log
        var figures = PartitionStatus(name: settings.name, state: .connecting)
        figures.lastError = persisted.lastError
        let statusChanges = StatusChanges()
        self.statusChanges = statusChanges
        self.reporter = PartitionReporter(context: context, log: log, statusChanges: statusChanges, figures: figures)
    }

    // MARK: Run loop

    /// Keeps the partition in sync over `link` until the connection ends or the partition is
    /// removed: pass after pass, each started by what the state database says about resets.
    func run(on link: any PartitionLink) async {
        while !Task.isCancelled {
            let event: Event
            do {
                event = .passStarted(pendingReset: machine.passLooksUpResets ? try await lookUpPendingReset() : nil)
            } catch is CancellationError {
                return
            } catch {
                log.error("client reset could not continue: \(error)")
                event = .resetEnded(.failed)
            }
            if await feed(event, on: link) { return }
        }
    }

    /// Hands `event` to the machine and performs the actions it returns, feeding each one's
    /// result back in turn. True when the run loop must return.
    private func feed(_ event: Event, on link: any PartitionLink) async -> Bool {
        // Cancelled (the connection closed, the daemon stops): what a step reports now is how
        // it was interrupted, not its outcome — the machine must not act on it (a store open
        // interrupted by the cancellation once stopped the partition until a reload).
        guard !Task.isCancelled else { return true }
        let actions = machine.handle(event)
        publish()
        defer { announceHeldError() }
        for action in actions {
            if action == .exit || Task.isCancelled { return true }
            if let next = await perform(action, on: link), await feed(next, on: link) { return true }
        }
        return false
    }

    /// Performs one action; returns the event that reports its result, if it has one.
    private func perform(_ action: Action, on link: any PartitionLink) async -> Event? {
        switch action {
        case .bind:
            let (end, boundFor) = await PartitionSessionLoop.sync(self, on: link)
            return .sessionEnded(end, boundFor: boundFor)
        case .driveReset(let initiate):
            return await resetStep("client reset could not continue") { try await self.driveRecordedReset(initiate: initiate) }
        case .startReset(let error):
            return await resetStep("client reset could not start") { try await self.resetGuarded(error) }
        case .startAlteredStoreReset(let alteration):
            return await resetStep("client reset of the altered store could not start") {
                try await self.beginAlteredStoreReset(alteration)
            }
        case .quarantine(let problem):
            do {
                try await quarantine(because: problem)
                return nil
            } catch {
                log.error("the damaged store \(settings.storePath) could not be quarantined; syncing of \(settings.name) stops until a reload: \(error)")
                recordError(SyncError(.badClientFile, "the damaged store could not be quarantined: \(error)", action: .fatal))
                return .quarantineFailed(reason: "\(error)")
            }
        case .waitForWake:
            if case .stopped(let reason) = machine.phase {
                log.debug("stopped until the configuration is reloaded: \(reason)")
            }
            await waitForWake()
        case .backOff(let floor, let newSeries):
            if newSeries { backoff.reset() }
            let delay = backoff.next(floor: floor)
            log.debug("binding again in \(delay)")
            await sleepOrWake(delay)
        case .sleep(let delay):
            await sleepOrWake(delay)
        case .resetBackoff, .persistStatus, .wake, .exit:
            performAtOnce(action)
        }
        return nil
    }

    /// The actions that neither wait nor report a result (all that operator commands get).
    private func performAtOnce(_ action: Action) {
        switch action {
        case .resetBackoff: backoff.reset()
        case .persistStatus: persistStatus("the partition's pause, stop reason and last error")
        case .wake: wake()
        default: log.critical("internal error: action \(action) outside the run loop was ignored")
        }
    }

    /// A reset step: its result, or `failed` after logging why (the loop backs off).
    private func resetStep(_ what: String, _ body: () async throws -> PartitionStateMachine.ResetEnd) async -> Event? {
        do {
            return .resetEnded(try await body())
        } catch is CancellationError {
            return nil
        } catch {
            log.error("\(what): \(error)")
            return .resetEnded(.failed)
        }
    }

    // MARK: Control

    /// Hands an operator's or the agent's event to the machine (never waits).
    func command(_ event: Event) {
        for action in machine.handle(event) { performAtOnce(action) }
        publish()
    }

    /// Pauses syncing. The pause is recorded first (it outlives a restart); when it cannot be
    /// recorded (a full disk) nothing changes and the error goes to the operator.
    func pause() throws {
        try reporter.recordPause(true, machine, settings: settings)
        command(.pauseRequested)
    }

    /// Resumes syncing; recorded first, like ``pause()``: a resume that was not recorded would
    /// turn back into a pause at the next start.
    func resume() throws {
        // Resuming a partition that is not paused changes nothing (its session, and the state
        // it reports, go on).
        guard machine.isPaused else { return }
        try reporter.recordPause(false, machine, settings: settings)
        command(.resumeRequested)
    }

    func remove() { command(.removeRequested) }

    /// A reload: new settings; a stopped partition gets another chance (105 and 204 are
    /// retried only after a reload).
    func update(_ settings: PartitionSettings) {
        self.settings = settings
        command(.reloaded)
    }

    /// The agent's connection closed.
    func connectionLost() { command(.connectionLost) }

    func wake() { wakeSignal.signal() }

    func waitForWake() async { await wakeSignal.wait() }

    /// Sleeps for `delay`, or less when woken.
    func sleepOrWake(_ delay: Duration) async { await wakeSignal.sleep(for: delay) }

    var shouldEndSession: Bool { machine.sessionShouldEnd }

    /// Tells the machine about a step of the bind.
    func sessionEvent(_ event: Event) {
        _ = machine.handle(event)
        publish()
    }

    // MARK: Status

    /// What `tetherctl status` shows: the machine's state and pending reset with the figures.
    var status: PartitionStatus { reporter.status(of: machine) }

    /// The figures shown with the machine's state: versions, counts, last error, download.
    var figures: PartitionStatus { reporter.figures }

    /// Changes the figures; the machine learns whether the store caught up.
    func updateFigures(_ change: (inout PartitionStatus) -> Void) {
        let unsyncedBefore = reporter.figures.unsyncedChanges
        change(&reporter.figures)
        reporter.figures.noteUnsyncedChange(from: unsyncedBefore, at: Date().timeIntervalSince1970)
        figuresChanged()
    }

    /// The figures changed: the machine learns whether the store caught up, the change is published.
    func figuresChanged() {
        _ = machine.handle(.countsChanged(caughtUp: reporter.figures.isCaughtUp))
        publish()
    }

    /// Signals a change of ``status`` (systemd's STATUS=, metrics, wait-synced) when there is one.
    private func publish() { reporter.publish(machine, settings: settings) }

    /// Records `error` as the partition's last error and announces it (event, error hook),
    /// with `resetID` when it belongs to a reset already recorded. `heldForItsReset`: the error
    /// starts a reset, and is announced with that reset's id once it is recorded
    /// (``announceHeldError(resetID:)``), or without one if none starts.
    func recordError(_ error: SyncError, resetID: String? = nil, heldForItsReset: Bool = false) {
        let at = Date().timeIntervalSince1970
        updateFigures { $0.lastError = .init(code: error.code.rawValue, message: error.message, at: at) }
        persistStatus("the error")
        reporter.announce(error, resetID: resetID, heldForItsReset: heldForItsReset, settings: settings)
    }

    /// Announces a held reset-causing error that started no reset (deferred by the loop
    /// guard, a store already emptied, the session ended first).
    func announceHeldError(resetID: String? = nil) { reporter.announceHeldError(resetID: resetID, settings: settings) }

    /// Writes the partition's row of the state database (pause, stop reason, last error), so a
    /// restart shows the same (a failure is logged: see ``PartitionReporter/persist(_:_:)``).
    func persistStatus(_ what: String) { reporter.persist(reporter.statusRow(machine, settings: settings), what) }

    /// Healthy unless an event has been handled for longer than `limit` without progress.
    func isMakingProgress(limit: Duration) -> Bool {
        guard busySince != nil else { return true }
        return ContinuousClock.now - lastProgress < limit
    }
}
