import Foundation
import Logging
import TetherSyncClient
import TetherControl
import TetherProtocol
import TetherStore

/// One configured partition: performs what its ``PartitionStateMachine`` decides — binds its
/// session, drives its client resets and quarantines, waits and backs off — and feeds back what
/// happened. Runs inside the agent's connection. What is mutable across binds is in this actor,
/// and nothing of it is writable from outside: the settings, the store and the machine
/// (readable), the reporter's figures, the backoff, the bind under way (``PartitionSession``,
/// which holds the bind's own state and runs its control flow with this actor as its
/// ``PartitionSession/Host``), the 108 watch and whether the last reset awaits a bind.
actor PartitionController: PartitionSession.Host {
    private(set) var settings: PartitionSettings
    let context: any AgentContext
    private(set) var store: PartitionStore?
    private(set) var machine: PartitionStateMachine
    /// The figures, status events, error announcements and status row (``PartitionReporter``).
    private var reporter: PartitionReporter
    private var backoff: Backoff
    /// Wakes a controller that waits (paused, stopped, reset pending, backing off) and ends a
    /// session the machine says must end.
    private let wakeSignal = WakeSignal()
    /// A backoff sleep runs (between binds, or after a failed reset step): `retry-now` ends it.
    private var backingOff = false
    /// Every change of ``status`` (for `wait-synced`).
    nonisolated let statusChanges: StatusChanges
    /// The bind under way, from its request to the session's end (nil between sessions).
    private var session: PartitionSession?
    /// Whether binds keep meeting 108 (the identity bound in another session); spans binds.
    private var boundElsewhere = BoundElsewhereWatch()
    /// Whether the last reset may still wait for a bind to confirm it: true at the start (a
    /// reset before a restart may), and after each reset that finished.
    private var lastResetUnconfirmed = true
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

    /// What the run loop does once a step and what followed from it are done.
    private enum Next {
        case nextPass
        case exit
    }

    /// Keeps the partition in sync over `link` until the connection ends or the partition is
    /// removed: pass after pass, each started by what the state database says about resets.
    func run(on link: any PartitionLink) async {
        while !Task.isCancelled {
            if await pass(on: link) == .exit { return }
        }
    }

    // Each input below is handed to the machine only while the task is not cancelled (the
    // connection closed, the daemon stops): what a step reports then is how it was
    // interrupted, not its outcome — the machine must not act on it (a store open interrupted
    // by the cancellation once stopped the partition until a reload). After each, a held
    // reset-causing error that started no reset is announced.

    private func pass(on link: any PartitionLink) async -> Next {
        let pendingReset: PartitionStateMachine.PendingReset?
        do {
            // Each step that reaches the store, the connection or a reset runs in a task that
            // ends with it (ShortLivedTask): this loop lives as long as the partition.
            pendingReset = machine.passLooksUpResets ? try await ShortLivedTask.run { try await self.lookUpPendingReset() } : nil
        } catch is CancellationError {
            return .exit
        } catch {
            log.error("client reset could not continue: \(error)")
            return await resetEnded(.failed)
        }
        guard !Task.isCancelled else { return .exit }
        defer { announceHeldError() }
        switch transition({ $0.passStarted(pendingReset: pendingReset) }) {
        case .bind:
            let session = PartitionSession()
            self.session = session
            let end = await session.run(on: link, host: self)
            self.session = nil
            return await sessionEnded(end, boundFor: session.boundFor)
        case .driveReset(let initiate):
            return await resetStep("client reset could not continue") { try await self.driveRecordedReset(initiate: initiate) }
        case .waitForWake:
            if case .stopped(let reason) = machine.phase {
                log.debug("stopped until the configuration is reloaded: \(reason)")
            }
            await waitForWake()
            return .nextPass
        case .exit:
            return .exit
        }
    }

    private func sessionEnded(_ end: PartitionStateMachine.SessionEnd, boundFor: Duration?) async -> Next {
        guard !Task.isCancelled else { return .exit }
        defer { announceHeldError() }
        switch transition({ $0.sessionEnded(end, boundFor: boundFor) }) {
        case .exit:
            return .exit
        case .backOff(let floor, let newSeries):
            await backOff(floor: floor, newSeries: newSeries)
        case .startReset(let error):
            return await resetStep("client reset could not start") { try await self.resetGuarded(error) }
        case .startAlteredStoreReset(let alteration):
            return await resetStep("client reset of the altered store could not start") {
                try await self.beginAlteredStoreReset(alteration)
            }
        case .quarantine(let problem):
            do {
                try await quarantine(because: problem)
            } catch {
                log.error("the damaged store \(settings.storePath) could not be quarantined; syncing of \(settings.name) stops until a reload: \(error)")
                recordError(SyncError(.badClientFile, "the damaged store could not be quarantined: \(error)", action: .fatal))
                return quarantineFailed(reason: "\(error)")
            }
        case .persistStatus:
            persistStatus("the partition's pause, stop reason and last error")
        case .nextPass:
            break
        }
        return .nextPass
    }

    private func quarantineFailed(reason: String) -> Next {
        guard !Task.isCancelled else { return .exit }
        defer { announceHeldError() }
        transition { $0.quarantineFailed(reason: reason) }
        persistStatus("the partition's pause, stop reason and last error")
        return .nextPass
    }

    /// A reset step: its end, or `failed` after logging why (the loop backs off).
    private func resetStep(_ what: String, _ body: @escaping @Sendable () async throws -> PartitionStateMachine.ResetEnd) async -> Next {
        let end: PartitionStateMachine.ResetEnd
        do {
            end = try await ShortLivedTask.run(body)
        } catch is CancellationError {
            return .nextPass
        } catch {
            log.error("\(what): \(error)")
            end = .failed
        }
        return await resetEnded(end)
    }

    private func resetEnded(_ end: PartitionStateMachine.ResetEnd) async -> Next {
        guard !Task.isCancelled else { return .exit }
        defer { announceHeldError() }
        switch transition({ $0.resetEnded(end) }) {
        case .resetBackoff: backoff.reset()
        case .backOff(let floor, let newSeries): await backOff(floor: floor, newSeries: newSeries)
        case .sleep(let delay): await sleepOrWake(delay)
        case .nextPass: break
        }
        return .nextPass
    }

    private func backOff(floor: Duration, newSeries: Bool) async {
        if newSeries { backoff.reset() }
        let delay = backoff.next(floor: floor)
        log.debug("binding again in \(delay)")
        await sleepOrWake(delay)
    }

    /// Hands an input to the machine and publishes the change; the input's actions.
    @discardableResult
    private func transition<Action>(_ input: (inout PartitionStateMachine) -> Action) -> Action {
        defer { publish() }
        return input(&machine)
    }

    // MARK: Control

    /// Hands an operator's or the agent's command to the machine and performs what it says
    /// (never waits), then publishes the change.
    private func command(_ input: (inout PartitionStateMachine) -> PartitionStateMachine.CommandAction) {
        switch input(&machine) {
        case .none: break
        case .wake: wake()
        case .persistStatusThenWake:
            persistStatus("the partition's pause, stop reason and last error")
            wake()
        }
        publish()
    }

    /// Pauses syncing. The pause is recorded first (it outlives a restart); when it cannot be
    /// recorded (a full disk) nothing changes and the error goes to the operator.
    func pause() throws {
        try reporter.recordPause(true, machine, settings: settings)
        command { $0.pauseRequested() }
    }

    /// Resumes syncing; recorded first, like ``pause()``: a resume that was not recorded would
    /// turn back into a pause at the next start.
    func resume() throws {
        // Resuming a partition that is not paused changes nothing (its session, and the state
        // it reports, go on).
        guard machine.isPaused else { return }
        try reporter.recordPause(false, machine, settings: settings)
        command { $0.resumeRequested() }
    }

    func remove() { command { $0.removeRequested() } }

    /// A reload: new settings; a stopped partition gets another chance (105 and 204 are
    /// retried only after a reload). Changed subscriptions end the session in flight, so the
    /// next bind asks for them (no reset: the server changes the store's rows by chunks).
    func update(_ settings: PartitionSettings) {
        let old = self.settings.subscriptions
        self.settings = settings
        if old != settings.subscriptions {
            log.notice(
                "subscriptions of \(settings.name) changed (digest \(SubscriptionSet.digestText(of: old)) → \(SubscriptionSet.digestText(of: settings.subscriptions)))")
            command { $0.rebindRequested() }
        }
        command { $0.reloaded() }
    }

    /// `reset initiate` for the reset recorded and waiting for an operator.
    func initiateRecordedReset() { command { $0.initiateRequested() } }

    /// `reset initiate` recorded a forced reset: the session in flight ends, the run loop drives it.
    func forcedResetRecorded(id: String) { command { $0.resetForced(id: id) } }

    /// The agent's connection closed.
    func connectionLost() { transition { $0.connectionLost() } }

    func wake() { wakeSignal.signal() }

    func waitForWake() async { await wakeSignal.wait() }

    /// Sleeps for `delay`, or less when woken.
    private func sleepOrWake(_ delay: Duration) async {
        backingOff = true
        defer { backingOff = false }
        await wakeSignal.sleep(for: delay)
    }

    /// `retry-now`: ends the backoff at once, so the partition binds again (or its reset goes
    /// on) now; false when no backoff runs (nothing to retry, and no wake is left pending).
    func retryNow() -> Bool {
        guard backingOff else { return false }
        wake()
        return true
    }

    /// A reset was recorded (for a session's error or an altered store) and is under way.
    func resetStarted(id: String) { transition { $0.resetStarted(id: id) } }

    /// How a reset step ended, for the state machine; a reset that finished waits for a bind
    /// to confirm it (``confirmLastReset()``).
    func finished(_ record: ResetRecord) -> PartitionStateMachine.ResetEnd {
        guard record.phase == .done else { return .waitsForOperator(PartitionStateMachine.PendingReset(record)) }
        lastResetUnconfirmed = true
        return .done(deleteStore: record.strategy == .deleteStore)
    }

    /// A bind succeeded: the server accepted the store the last reset produced, so a later
    /// reset-causing error is not a repeat of it (``ResetLoopGuard``). Recorded once per reset.
    func confirmLastReset() throws {
        guard lastResetUnconfirmed else { return }
        defer { lastResetUnconfirmed = false }
        try resets.markLastResetConfirmed()
    }

    /// The store the partition holds from now on: opened, left by a bootstrap (kept even when
    /// its adoption failed), or none (moved aside).
    func adopt(_ store: PartitionStore?) { self.store = store }

    // MARK: The host of a bind (``PartitionSession/Host``)

    var shouldEndSession: Bool { machine.sessionShouldEnd }

    var uploadsMayFlow: Bool { machine.sessionReady && !machine.sessionShouldEnd }

    func bindSent() { transition { $0.bindSent() } }

    func bound(_ reply: BindReply) {
        transition { $0.bound(stateFollows: reply.stateFollows) }
        boundElsewhere.bound()
        updateFigures {
            $0.latestServerVersion = reply.latestServerVersion.version
            $0.clientFile = reply.identity.id
        }
    }

    func sessionReady() { transition { $0.sessionReady(caughtUp: reporter.figures.isCaughtUp) } }

    func identityTakenElsewhere(_ error: SyncError) -> SyncError? { boundElsewhere.identityTakenElsewhere(error) }

    func show(_ error: SyncError, heldForItsReset: Bool) { recordError(error, heldForItsReset: heldForItsReset) }

    func applied(_ report: ApplyReport, latestServerVersion: Int64) async throws {
        updateFigures { $0.latestServerVersion = max($0.latestServerVersion, latestServerVersion) }
        try await refreshCounts()
        // Caught up with the server's downloads (local changes may still wait for their upload).
        let figures = reporter.figures
        reporter.applied(report, caughtUp: figures.serverVersion >= figures.latestServerVersion, partition: settings.name)
    }

    func subscriptionsPending(_ pending: Bool) {
        guard reporter.figures.subscriptionsPending != pending else { return }
        updateFigures { $0.subscriptionsPending = pending }
    }

    func compensated(_ notice: CompensatingWrites) {
        guard !notice.writes.isEmpty else { return }
        reporter.compensated(notice, settings: settings)
        figuresChanged()
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
    private func figuresChanged() {
        transition { $0.countsChanged(caughtUp: reporter.figures.isCaughtUp) }
    }

    /// A chunk of the server's state arrived (a bootstrap, or a reset's step 4).
    func downloadProgress(_ progress: DownloadProgress) {
        session?.progressed()
        reporter.downloadProgress(progress, partition: settings.name)
        figuresChanged()
    }

    /// The download is over: stored (`complete`), or failed.
    func downloadEnded(complete: Bool) {
        reporter.downloadEnded(complete: complete, partition: settings.name)
        figuresChanged()
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
    private func persistStatus(_ what: String) { reporter.persist(reporter.statusRow(machine, settings: settings), what) }

    /// Healthy unless an event of the session has been handled for longer than `limit` without
    /// progress (``PartitionSession/isMakingProgress(limit:)``).
    func isMakingProgress(limit: Duration) -> Bool {
        session?.isMakingProgress(limit: limit) ?? true
    }
}
