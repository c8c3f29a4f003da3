import Foundation
import Logging
import TetherClient
import TetherProtocol
import TetherStore

/// One configured partition: its store, its session on the current server connection, its
/// client resets and its status. Runs inside the agent's connection; everything mutable is
/// in this actor.
actor PartitionController {
    private(set) var settings: PartitionSettings
    let context: any AgentContext
    var store: PartitionStore?
    private(set) var status: PartitionStatus
    var backoff = Backoff()
    /// Wakes a controller that waits (paused, stopped, reset pending, backing off).
    private let wakeSignal = WakeSignal()
    private(set) var removed = false
    private var initiateRequested = false
    /// A pending manual reset is carried out at the next start of the daemon (docs/contract.md: Manual resets and delete-store).
    private var initiateOnStart = true
    var stoppedReason: String?
    var paused: Bool
    /// Set while an event is being handled, for the watchdog (a wedged session stops pings).
    var busySince: ContinuousClock.Instant?
    var lastProgress = ContinuousClock.now
    /// Uploads resume after this local seq (the server's integrated seq, or what this session sent).
    var uploadCursor: Int64 = 0
    /// When the current session was bound (for resetting the backoff after a healthy session).
    var boundAt: ContinuousClock.Instant?
    /// True once the session is bound and the store ready: uploads may flow.
    var sessionReady = false
    var uploading = false
    /// What the server granted at the last bind.
    var access: PartitionAccess = .readwrite
    var uploadAgain = false
    /// A reset recorded by `reset initiate` that the run loop has not picked up yet: it ends a
    /// session in flight.
    var resetWaitsForRunLoop = false
    /// Whether the last reset still waits for a bind to confirm it (nil: not looked up yet).
    var resetAwaitingBind: Bool?
    let log: Logger

    /// `persisted`: the partition's row of the state database (pause and last error survive a
    /// restart; a stop reason does not: a start retries, as a reload does).
    init(settings: PartitionSettings, context: any AgentContext, persisted: PartitionStatusRow) {
        self.settings = settings
        self.context = context
        self.paused = persisted.paused
        self.status = PartitionStatus(name: settings.name, state: persisted.paused ? .paused : .connecting)
        self.status.lastError = persisted.lastError
        var log = context.logger
        log[metadataKey: "tether.partition"] = .string(settings.name.rawValue)
        self.log = log
    }

    // MARK: Run loop

    /// Keeps the partition in sync over `connection` until the connection ends or the
    /// partition is removed.
    func run(on connection: SyncConnection) async {
        while !removed && !Task.isCancelled {
            if paused {
                setState(.paused)
                await waitForWake()
                continue
            }
            if let reason = stoppedReason {
                setState(.stopped)
                log.debug("stopped until the configuration is reloaded: \(reason)")
                await waitForWake()
                continue
            }
            do {
                if try await continueReset() { continue }
            } catch is CancellationError {
                return
            } catch {
                log.error("client reset could not continue: \(error)")
                await pauseForBackoff()
                continue
            }
            switch await syncSession(on: connection) {
            case .connectionLost:
                connectionLost()
                return
            case .retry(let error):
                connectionLost()
                // A session that stayed up a while was healthy: its end starts a new series.
                if let boundAt, ContinuousClock.now - boundAt > .seconds(30) { backoff.reset() }
                boundAt = nil
                let delay = backoff.next(floor: .milliseconds(error?.retryAfterMilliseconds ?? 0))
                log.debug("binding again in \(delay)")
                await sleepOrWake(delay)
            case .reset(let error):
                if error.action == .deleteStore, await storeIsAlreadyEmptied() {
                    // A delete-store already emptied this store: nothing left to protect, so
                    // keep asking with backoff in case access is granted again (docs/contract.md: Manual resets and delete-store).
                    connectionLost()
                    await sleepOrWake(backoff.next())
                    continue
                }
                do { try await resetGuarded(error) } catch is CancellationError {
                    return
                } catch {
                    log.error("client reset could not start: \(error)")
                    await pauseForBackoff()
                }
            case .stop(let reason):
                stoppedReason = reason
                persistStatus("why the partition stopped")
            case .storeDamaged(let problem):
                do { try await quarantine(because: problem) } catch {
                    stoppedReason = "the damaged store could not be quarantined: \(error)"
                    persistStatus("why the partition stopped")
                }
            case .storeAltered(let alteration):
                do { try await beginAlteredStoreReset(alteration) } catch {
                    log.error("client reset of the altered store could not start: \(error)")
                    await pauseForBackoff()
                }
            case .interrupted:
                continue
            }
        }
    }

    /// Outcome of one bind: what the run loop does next.
    enum SessionOutcome {
        case connectionLost
        case retry(SyncError?)
        case reset(SyncError)
        case stop(reason: String)
        /// The store file is corrupt or not SQLite: quarantine it, then bootstrap.
        case storeDamaged(StoreError)
        /// An application altered the store's tables: a manual reset.
        case storeAltered(StoreError)
        /// Paused, removed or woken for a reset: loop again.
        case interrupted
    }

    // MARK: Control

    /// Pauses syncing. The pause is recorded first (it outlives a restart); when it cannot be
    /// recorded (a full disk) nothing changes and the error goes to the operator.
    func pause() throws {
        var row = statusRow()
        row.paused = true
        try context.stateDatabase.update(row)
        paused = true
        wake()
    }

    /// Resumes syncing; recorded first, like ``pause()``: a resume that was not recorded would
    /// turn back into a pause at the next start.
    func resume() throws {
        // Resuming a partition that is not paused changes nothing (its session, and the state
        // it reports, go on).
        guard paused else { return }
        var row = statusRow()
        row.paused = false
        try context.stateDatabase.update(row)
        paused = false
        setState(.connecting)
        wake()
    }

    func remove() {
        removed = true
        wake()
    }

    /// A reload: new settings; a stopped partition gets another chance (docs/contract.md: Sync errors: 105/204
    /// are retried only after a reload).
    func update(_ settings: PartitionSettings) {
        self.settings = settings
        stoppedReason = nil
        wake()
    }

    /// `tetherctl reset initiate`.
    func requestInitiate() {
        initiateRequested = true
        wake()
    }

    func wake() { wakeSignal.signal() }

    func waitForWake() async { await wakeSignal.wait() }

    /// Sleeps for `delay`, or less when woken.
    func sleepOrWake(_ delay: Duration) async { await wakeSignal.sleep(for: delay) }

    func pauseForBackoff() async { await sleepOrWake(backoff.next()) }

    /// True the first time only: this is the daemon's start.
    func consumeStart() -> Bool {
        defer { initiateOnStart = false }
        return initiateOnStart
    }

    func takeInitiateRequest(atStart: Bool) -> Bool {
        defer { initiateRequested = false }
        return initiateRequested || atStart
    }

    // MARK: Status

    /// The session or the connection ended: a partition that was using it (connecting,
    /// syncing, synced) is offline; one that waits for something else — an operator
    /// (reset-pending), a reset under way, a pause, a reload (stopped) — keeps its state and
    /// reason, so nothing an operator or a script keys on is hidden by a dropped connection.
    func connectionLost() {
        guard [.connecting, .syncing, .synced].contains(status.state) else { return }
        setState(.offline)
    }

    func setState(_ state: PartitionState) {
        var state = state
        if state == .syncing && sessionReady && status.isCaughtUp { state = .synced }
        guard status.state != state else { return }
        status.state = state
        if state != .syncing { status.download = nil }
        context.statusChanged()
    }

    func updateStatus(_ change: (inout PartitionStatus) -> Void) {
        let before = status
        change(&status)
        if status.state == .syncing && sessionReady && status.isCaughtUp { status.state = .synced }
        if status.state == .synced && !status.isCaughtUp { status.state = .syncing }
        if status != before { context.statusChanged() }
    }

    func recordError(_ error: SyncError) {
        let at = Date().timeIntervalSince1970
        status.lastError = .init(code: error.code.rawValue, message: error.message, at: at)
        persistStatus("the error")
    }

    /// Writes the partition's row of the state database (pause, stop reason, last error), so a
    /// restart shows the same. When that fails (a full disk) the partition goes on with what it
    /// knows in memory; the journal says what a restart would not remember.
    func persistStatus(_ what: String) {
        do {
            try context.stateDatabase.update(statusRow())
        } catch {
            log.warning("could not record \(what) in the state database; a restart would not show it: \(error)")
        }
    }

    func statusRow() -> PartitionStatusRow {
        PartitionStatusRow(name: settings.name, paused: paused, stoppedReason: stoppedReason, lastError: status.lastError)
    }

    /// True for a store a delete-store action emptied: no identity and nothing unsynced.
    func storeIsAlreadyEmptied() async -> Bool {
        guard let store, let metadata = try? await store.metadata(), metadata.clientFile == nil else { return false }
        return (try? await store.pendingChangeCount()) == 0
    }

    /// Healthy unless an event has been handled for longer than `limit` without progress.
    func isMakingProgress(limit: Duration) -> Bool {
        guard busySince != nil else { return true }
        return ContinuousClock.now - lastProgress < limit
    }
}
