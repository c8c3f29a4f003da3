import TetherProtocol
import TetherStore

/// The lifecycle of one partition, without I/O: where it is (connecting, bootstrapping,
/// syncing, offline, paused, reset-pending, resetting, stopped), what it remembers across a
/// session (a pause, a stop reason, an operator's request), and what its run loop does next.
/// ``PartitionController`` performs the actions and feeds back what happened; the status
/// `tetherctl status` shows is derived here, in ``shownState``, and nowhere else.
///
/// The run loop works in passes. A pass starts with ``Event/passStarted(pendingReset:)`` (the
/// state database's answer: is a reset recorded for this partition?), which decides the pass's
/// one step: bind a session, drive a reset, wait for an operator or a reload, or leave. The
/// step's result is the next event; a step with no result starts the next pass.
struct PartitionStateMachine: Sendable, Hashable {
    enum Phase: Sendable, Hashable {
        /// Before the first pass.
        case starting
        /// A bind is under way (sent, not answered yet).
        case connecting
        /// Bound; the server's state is arriving for a new store.
        case bootstrapping
        /// Bound and ready: uploads and downloads flow.
        case syncing
        /// The session or the connection ended; the partition binds again after a wait.
        case offline
        case paused
        /// A manual reset or a delete-store action waits for `tetherctl reset initiate`.
        case resetPending
        case resetting
        /// Until a reload (105, 204, a store that cannot be opened or quarantined).
        case stopped
        case removed
    }

    /// A reset recorded in the state database and not finished.
    struct PendingReset: Sendable, Hashable {
        var id: String
        /// In phase manual-hook or manual-pending: carried out only when an operator says so
        /// (or at the daemon's start).
        var waitsForOperator: Bool
        /// Why it waits, for `tetherctl status`.
        var reason: String?
    }

    /// How a session ended.
    enum SessionEnd: Sendable, Hashable {
        /// The connection is gone: the agent reconnects, then runs the partition again.
        case connectionLost
        /// Bind again after a backoff no shorter than the error's retry-after.
        case retry(SyncError?)
        /// A reset-causing error; `storeEmptied`: a delete-store action already emptied the
        /// store (nothing left to protect: ask again later instead of resetting again).
        case reset(SyncError, storeEmptied: Bool)
        /// Stop until a reload (105, 204, a store that cannot be opened).
        case stop(reason: String)
        /// The store is corrupt or not SQLite: quarantine it, then bootstrap.
        case storeDamaged(StoreError)
        /// An application altered the store's tables: a manual reset.
        case storeAltered(StoreError)
        /// Paused, removed, or a forced reset was recorded: the next pass decides.
        case interrupted
    }

    /// How a reset step ended.
    enum ResetEnd: Sendable, Hashable {
        case done(deleteStore: Bool)
        case waitsForOperator(PendingReset)
        /// It could not start or go on (the journal says why); tried again after a backoff.
        case failed
        /// A repeated reset must wait this long (``ResetLoopGuard``); the partition is offline
        /// meanwhile, then binds again first (the server may have been mended).
        case deferred(Duration)
    }

    enum Event: Sendable, Hashable {
        // The operator and the configuration (the pause and resume are persisted first).
        case pauseRequested
        case resumeRequested
        case removeRequested
        case reloaded
        /// `reset initiate` for a reset waiting for an operator.
        case initiateRequested
        /// `reset initiate` recorded a forced reset: it ends the session in flight.
        case resetForced(id: String)
        /// The agent's connection closed.
        case connectionLost
        // The run loop.
        case passStarted(pendingReset: PendingReset?)
        case bindSent
        case bound(stateFollows: Bool)
        /// The bind is complete (store bootstrapped or checked): uploads may flow.
        case sessionReady(caughtUp: Bool)
        /// Nothing unsynced and the server's latest version integrated, or not.
        case countsChanged(caughtUp: Bool)
        /// `boundFor`: how long the session had been bound (nil: never bound).
        case sessionEnded(SessionEnd, boundFor: Duration?)
        case resetStarted(id: String?)
        case resetEnded(ResetEnd)
        case quarantineFailed(reason: String)
    }

    enum Action: Sendable, Hashable {
        /// Bind a session and run it until it ends (``Event/sessionEnded(_:boundFor:)``).
        case bind
        /// Carry out the recorded reset; `initiate`: an operator's go (or the daemon's start).
        case driveReset(initiate: Bool)
        /// Start a reset for `error`, if ``ResetLoopGuard`` allows (``Event/resetEnded(_:)``).
        case startReset(SyncError)
        /// A manual reset of a store an application altered.
        case startAlteredStoreReset(StoreError)
        /// Move the damaged store aside (recorded as a reset), then bootstrap.
        case quarantine(StoreError)
        /// Wait for a wake (operator command, reload), then start the next pass.
        case waitForWake
        /// Sleep a backoff delay (no shorter than `floor`), or until woken; `newSeries`: the
        /// session was healthy, the backoff starts again from its first delay.
        case backOff(floor: Duration, newSeries: Bool)
        /// Sleep `delay`, or until woken.
        case sleep(Duration)
        /// Start the backoff from its first delay at the next failure.
        case resetBackoff
        /// Write the pause flag, the stop reason and the last error to the state database.
        case persistStatus
        /// Wake the run loop (and end the session in flight if ``sessionShouldEnd``).
        case wake
        /// Return from the run loop (removed, or the connection is gone).
        case exit
    }

    /// A session that stayed bound this long was healthy: its end starts a new backoff series.
    static let healthySession: Duration = .seconds(30)

    private(set) var phase: Phase
    private(set) var paused: Bool
    private(set) var stoppedReason: String?
    private(set) var removed = false
    /// The reset recorded and not finished, as the last pass saw it (or a forced one since).
    private(set) var pendingReset: PendingReset?
    /// True once the session is bound and its store ready.
    private(set) var sessionReady = false
    private(set) var caughtUp = false
    /// A pending manual reset is carried out by the daemon's start (docs/client-reset.md).
    private var atStart = true
    private var initiateRequested = false
    /// A forced reset was recorded and the run loop has not picked it up yet.
    private var forcedResetWaiting = false

    init(paused: Bool) {
        self.paused = paused
        self.phase = paused ? .paused : .starting
    }

    /// Whether the next pass needs the state database's answer about resets (a paused, stopped
    /// or removed partition waits or leaves whatever is recorded).
    var passLooksUpResets: Bool { !removed && !paused && stoppedReason == nil }

    /// Pause, removal and a forced reset end the session in flight at once.
    var sessionShouldEnd: Bool { removed || paused || forcedResetWaiting }

    /// What `tetherctl status` shows.
    var shownState: PartitionState {
        switch phase {
        case .starting, .connecting: .connecting
        case .bootstrapping: .syncing
        case .syncing: sessionReady && caughtUp ? .synced : .syncing
        case .offline: .offline
        case .paused: .paused
        case .resetPending: .resetPending
        case .resetting: .resetting
        case .stopped, .removed: .stopped
        }
    }

    /// Handles `event`; returns what to do, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .pauseRequested:
            paused = true
            return [.wake]
        case .resumeRequested:
            guard paused else { return [] }
            paused = false
            if phase == .paused { phase = .connecting }
            return [.wake]
        case .removeRequested:
            removed = true
            return [.wake]
        case .reloaded:
            stoppedReason = nil
            return [.wake]
        case .initiateRequested:
            initiateRequested = true
            return [.wake]
        case .resetForced(let id):
            stoppedReason = nil
            forcedResetWaiting = true
            pendingReset = PendingReset(id: id, waitsForOperator: false)
            phase = .resetting
            return [.persistStatus, .wake]
        case .connectionLost:
            goOffline()
            return []
        case .passStarted(let reset):
            return startPass(pendingReset: reset)
        case .bindSent:
            phase = .connecting
            return []
        case .bound(let stateFollows):
            if stateFollows { phase = .bootstrapping }
            return []
        case .sessionReady(let caughtUp):
            sessionReady = true
            self.caughtUp = caughtUp
            phase = .syncing
            return []
        case .countsChanged(let caughtUp):
            self.caughtUp = caughtUp
            return []
        case .sessionEnded(let end, let boundFor):
            sessionReady = false
            return sessionEnded(end, healthy: boundFor.map { $0 > Self.healthySession } ?? false)
        case .resetStarted(let id):
            phase = .resetting
            if let id { pendingReset = PendingReset(id: id, waitsForOperator: false) }
            return []
        case .resetEnded(let end):
            return resetEnded(end)
        case .quarantineFailed(let reason):
            stoppedReason = "the damaged store could not be quarantined: \(reason)"
            return [.persistStatus]
        }
    }

    private mutating func startPass(pendingReset reset: PendingReset?) -> [Action] {
        forcedResetWaiting = false
        if removed {
            phase = .removed
            return [.exit]
        }
        if paused {
            phase = .paused
            return [.waitForWake]
        }
        if stoppedReason != nil {
            phase = .stopped
            return [.waitForWake]
        }
        let start = atStart
        atStart = false
        pendingReset = reset
        guard let reset else {
            initiateRequested = false
            return [.bind]
        }
        guard reset.waitsForOperator else {
            phase = .resetting
            return [.driveReset(initiate: false)]
        }
        guard initiateRequested || start else {
            phase = .resetPending
            return [.waitForWake]
        }
        initiateRequested = false
        phase = .resetting
        return [.driveReset(initiate: true)]
    }

    private mutating func sessionEnded(_ end: SessionEnd, healthy: Bool) -> [Action] {
        switch end {
        case .connectionLost:
            goOffline()
            return [.exit]
        case .retry(let error):
            goOffline()
            return [.backOff(floor: .milliseconds(error?.retryAfterMilliseconds ?? 0), newSeries: healthy)]
        case .reset(let error, storeEmptied: true) where error.action == .deleteStore:
            // A delete-store already emptied this store: keep asking, in case access is
            // granted again (docs/client-reset.md).
            goOffline()
            return [.backOff(floor: .zero, newSeries: false)]
        case .reset(let error, _):
            return [.startReset(error)]
        case .stop(let reason):
            stoppedReason = reason
            return [.persistStatus]
        case .storeDamaged(let problem):
            return [.quarantine(problem)]
        case .storeAltered(let alteration):
            return [.startAlteredStoreReset(alteration)]
        case .interrupted:
            return []
        }
    }

    private mutating func resetEnded(_ end: ResetEnd) -> [Action] {
        switch end {
        case .done(let deleteStore):
            pendingReset = nil
            // Access was denied: try again later, in case it is granted back.
            if deleteStore { stoppedReason = nil }
            return [.resetBackoff]
        case .waitsForOperator(let reset):
            pendingReset = reset
            phase = .resetPending
            return []
        case .failed:
            return [.backOff(floor: .zero, newSeries: false)]
        case .deferred(let delay):
            goOffline()
            return [.sleep(delay)]
        }
    }

    /// The session or the connection ended: a partition that was using it is offline; one
    /// that waits for something else (an operator, a reset under way, a pause, a reload) keeps
    /// its state, so nothing an operator or a script keys on is hidden by a dropped connection.
    private mutating func goOffline() {
        sessionReady = false
        if [.starting, .connecting, .bootstrapping, .syncing].contains(phase) { phase = .offline }
    }
}
