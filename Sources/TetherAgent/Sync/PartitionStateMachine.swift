import TetherProtocol
import TetherStore

/// The lifecycle of one partition, without I/O: where it is (connecting, bootstrapping,
/// syncing, offline, paused, reset-pending, resetting, stopped), what it holds for the next pass
/// (a pause, a stop reason, an operator's request), and what its run loop does next.
/// ``PartitionController`` performs the actions and feeds back what happened; the status
/// `tetherctl status` shows is derived here, in ``shownState``, and nowhere else.
///
/// One method per input, each returning only the actions that input can produce
/// (``CommandAction``, ``PassAction``, ``SessionEndAction``, ``ResetEndAction``; the steps of a
/// bind return none). The run loop works in passes. A pass starts with
/// ``passStarted(pendingReset:)`` (the state database's answer: is a reset recorded for this
/// partition?), which decides the pass's one step: bind a session, drive a reset, wait for an
/// operator or a reload, or leave. The step's result is the next input
/// (``sessionEnded(_:boundFor:)``, ``resetEnded(_:)``); a step with no result starts the next pass.
///
/// Each fact is kept in one place. What is true in a phase is carried by the phase (a stopped
/// partition's reason, a session's readiness, the reset a partition waits for); what was asked
/// while the partition was elsewhere and takes effect at the next pass is in ``requests``,
/// never for the phase that already holds it (a pause asked during a session is a request; the
/// pass that follows makes it the phase and drops the request).
struct PartitionStateMachine: Sendable, Hashable {
    enum Phase: Sendable, Hashable {
        /// Before the first pass.
        case starting
        /// A bind is under way (sent, not answered yet).
        case connecting
        /// Bound; the server's state is arriving for a new store.
        case bootstrapping
        /// Bound (and ready, until the session ends): uploads and downloads flow.
        case syncing(SessionFacts)
        /// The session or the connection ended; the partition binds again after a wait.
        case offline
        /// Until a resume; with the reset that was pending when the pause began (still shown).
        case paused(PendingReset?)
        /// A manual reset or a delete-store action waits for `tetherctl reset initiate`.
        case resetPending(PendingReset)
        /// A reset is under way.
        case resetting(PendingReset)
        /// The reset finished; shown as resetting until the next pass binds.
        case resetFinished
        /// Until a reload (105, 204, a store that cannot be opened or quarantined).
        case stopped(reason: String)
        case removed
    }

    /// What is true of a bound session.
    struct SessionFacts: Sendable, Hashable {
        /// The store is bootstrapped or checked: uploads may flow (false once the session ended).
        var ready: Bool
        /// Nothing unsynced and the server's latest version integrated.
        var caughtUp: Bool
    }

    /// What the operator or a step asked while the partition was in another phase; the next
    /// pass acts on it. A request is never set for the phase that already holds its fact.
    struct Requests: Sendable, Hashable {
        /// Pause at the next pass (never set while the phase is paused).
        var pause = false
        /// Leave at the next pass (never set while the phase is removed).
        var remove = false
        /// Stop at the next pass that is not paused, for this reason (never set while stopped).
        var stop: String?
        /// `reset initiate` for a reset waiting for an operator: the next pass that sees one
        /// carries it out; dropped by a pass that sees none.
        var initiate = false
        /// A forced reset was recorded and the run loop has not picked it up yet: the session
        /// in flight ends.
        var forcedReset = false
        /// A reload changed what the bind asks for (the subscriptions): the session in flight ends.
        var rebind = false
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

    /// A session that stayed bound this long was healthy: its end starts a new backoff series.
    static let healthySession: Duration = .seconds(30)

    private(set) var phase: Phase
    private(set) var requests = Requests()
    /// No pass has looked up resets since the daemon started: a pending manual reset is
    /// carried out by the daemon's start (docs/client-reset.md).
    private var startUnused = true

    init(paused: Bool) {
        self.phase = paused ? .paused(nil) : .starting
    }

    /// Paused, or a pause waits for the next pass.
    var isPaused: Bool {
        if case .paused = phase { return true }
        return requests.pause
    }

    /// Removed, or the removal waits for the next pass.
    var isRemoved: Bool { phase == .removed || requests.remove }

    /// Why the partition is stopped, or stops at its next pass that is not paused.
    var stopReason: String? {
        if case .stopped(let reason) = phase { return reason }
        return requests.stop
    }

    /// The reset recorded and not finished, as the last pass saw it (or a forced one since).
    var pendingReset: PendingReset? {
        switch phase {
        case .resetPending(let reset), .resetting(let reset): return reset
        case .paused(let reset): return reset
        default: return nil
        }
    }

    /// True while the session is bound and its store ready.
    var sessionReady: Bool {
        if case .syncing(let facts) = phase { return facts.ready }
        return false
    }

    /// Whether the next pass needs the state database's answer about resets (a paused, stopped
    /// or removed partition waits or leaves whatever is recorded).
    var passLooksUpResets: Bool { !isRemoved && !isPaused && stopReason == nil }

    /// Pause, removal, a forced reset and a rebind end the session in flight at once.
    var sessionShouldEnd: Bool { isRemoved || isPaused || requests.forcedReset || requests.rebind }

    /// What `tetherctl status` shows.
    var shownState: PartitionState {
        switch phase {
        case .starting, .connecting: .connecting
        case .bootstrapping: .syncing
        case .syncing(let facts): facts.ready && facts.caughtUp ? .synced : .syncing
        case .offline: .offline
        case .paused: .paused
        case .resetPending: .resetPending
        case .resetting, .resetFinished: .resetting
        case .stopped, .removed: .stopped
        }
    }

    // MARK: The operator and the configuration (a pause and a resume are persisted first)

    mutating func pauseRequested() -> CommandAction {
        if !isPaused { requests.pause = true }
        return .wake
    }

    mutating func resumeRequested() -> CommandAction {
        guard isPaused else { return .none }
        // Back to where the pass that paused found it: the reset it waits for, or a bind.
        if case .paused(let reset) = phase {
            let back: Phase = reset.map { reset -> Phase in reset.waitsForOperator ? .resetPending(reset) : .resetting(reset) } ?? .connecting
            move(to: back)
        }
        requests.pause = false
        return .wake
    }

    mutating func removeRequested() -> CommandAction {
        if !isRemoved { requests.remove = true }
        return .wake
    }

    /// A reload: a stopped partition gets another chance.
    mutating func reloaded() -> CommandAction {
        requests.stop = nil
        if case .stopped = phase { phase = .connecting }
        return .wake
    }

    /// A reload changed the subscriptions: the session in flight ends and the next pass binds.
    mutating func rebindRequested() -> CommandAction {
        requests.rebind = true
        return .wake
    }

    /// `reset initiate` for a reset waiting for an operator.
    mutating func initiateRequested() -> CommandAction {
        requests.initiate = true
        return .wake
    }

    /// `reset initiate` recorded a forced reset: it ends the session in flight.
    mutating func resetForced(id: String) -> CommandAction {
        requests.forcedReset = true
        move(to: .resetting(PendingReset(id: id, waitsForOperator: false)))
        requests.stop = nil
        return .persistStatusThenWake
    }

    /// The agent's connection closed.
    mutating func connectionLost() {
        goOffline()
    }

    // MARK: The run loop

    /// A pass starts, with the state database's answer: the reset recorded for this partition
    /// and not finished, if any. Decides the pass's one step.
    mutating func passStarted(pendingReset reset: PendingReset?) -> PassAction {
        requests.forcedReset = false
        requests.rebind = false
        if isRemoved {
            move(to: .removed)
            return .exit
        }
        if isPaused {
            if case .paused = phase {} else { move(to: .paused(pendingReset)) }
            return .waitForWake
        }
        if let reason = stopReason {
            move(to: .stopped(reason: reason))
            return .waitForWake
        }
        let start = startUnused
        startUnused = false
        guard let reset else {
            requests.initiate = false
            // The reset the phase held is finished (or was undone): nothing is shown pending.
            switch phase {
            case .resetting: phase = .resetFinished
            case .resetPending: phase = .connecting
            default: break
            }
            return .bind
        }
        guard reset.waitsForOperator else {
            move(to: .resetting(reset))
            return .driveReset(initiate: false)
        }
        guard requests.initiate || start else {
            move(to: .resetPending(reset))
            return .waitForWake
        }
        requests.initiate = false
        move(to: .resetting(reset))
        return .driveReset(initiate: true)
    }

    /// The bind was sent.
    mutating func bindSent() {
        move(to: .connecting)
    }

    /// The server accepted the bind; `stateFollows`: a new store's bootstrap.
    mutating func bound(stateFollows: Bool) {
        if stateFollows { move(to: .bootstrapping) }
    }

    /// The bind is complete (store bootstrapped or checked): uploads may flow.
    mutating func sessionReady(caughtUp: Bool) {
        move(to: .syncing(SessionFacts(ready: true, caughtUp: caughtUp)))
    }

    /// Nothing unsynced and the server's latest version integrated, or not. Outside syncing the
    /// figure waits: ``sessionReady(caughtUp:)`` brings it.
    mutating func countsChanged(caughtUp: Bool) {
        if case .syncing(var facts) = phase {
            facts.caughtUp = caughtUp
            phase = .syncing(facts)
        }
    }

    /// The session ended so; `boundFor`: how long it had been bound (nil: never bound).
    mutating func sessionEnded(_ end: SessionEnd, boundFor: Duration?) -> SessionEndAction {
        if case .syncing(var facts) = phase {
            facts.ready = false
            phase = .syncing(facts)
        }
        let healthy = boundFor.map { $0 > Self.healthySession } ?? false
        switch end {
        case .connectionLost:
            goOffline()
            return .exit
        case .retry(let error):
            goOffline()
            return .backOff(floor: .milliseconds(error?.retryAfterMilliseconds ?? 0), newSeries: healthy)
        case .reset(let error, storeEmptied: true) where error.action == .deleteStore:
            // A delete-store already emptied this store: keep asking, in case access is
            // granted again (docs/client-reset.md).
            goOffline()
            return .backOff(floor: .zero, newSeries: false)
        case .reset(let error, _):
            return .startReset(error)
        case .stop(let reason):
            stop(because: reason)
            return .persistStatus
        case .storeDamaged(let problem):
            return .quarantine(problem)
        case .storeAltered(let alteration):
            return .startAlteredStoreReset(alteration)
        case .interrupted:
            return .nextPass
        }
    }

    /// A reset was recorded (for a session's error, or an altered store).
    mutating func resetStarted(id: String) {
        move(to: .resetting(PendingReset(id: id, waitsForOperator: false)))
    }

    /// A reset step ended so.
    mutating func resetEnded(_ end: ResetEnd) -> ResetEndAction {
        switch end {
        case .done(let deleteStore):
            switch phase {
            case .resetting, .resetPending, .resetFinished: phase = .resetFinished
            case .paused: phase = .paused(nil)
            // Access was denied: try again later, in case it is granted back.
            case .stopped where deleteStore: phase = .resetFinished
            default: break
            }
            if deleteStore { requests.stop = nil }
            return .resetBackoff
        case .waitsForOperator(let reset):
            move(to: .resetPending(reset))
            return .nextPass
        case .failed:
            return .backOff(floor: .zero, newSeries: false)
        case .deferred(let delay):
            goOffline()
            return .sleep(delay)
        }
    }

    /// The damaged store could not be moved aside: the partition stops until a reload (the
    /// executor persists the stop).
    mutating func quarantineFailed(reason: String) {
        stop(because: "the damaged store could not be quarantined: \(reason)")
    }

    /// A stop for `reason`: the phase's, when already stopped; otherwise for the next pass.
    private mutating func stop(because reason: String) {
        if case .stopped = phase {
            phase = .stopped(reason: reason)
        } else {
            requests.stop = reason
        }
    }

    /// Enters `next`. What the phase left held and `next` does not (a pause, a stop, a
    /// removal) becomes a request for the next pass; what `next` holds is no longer requested.
    private mutating func move(to next: Phase) {
        switch (phase, next) {
        case (.paused, .paused), (.stopped, .stopped), (.removed, .removed): break
        case (.paused, _): requests.pause = true
        case (.stopped(let reason), _): requests.stop = reason
        case (.removed, _): requests.remove = true
        default: break
        }
        switch next {
        case .paused: requests.pause = false
        case .stopped: requests.stop = nil
        case .removed: requests.remove = false
        default: break
        }
        phase = next
    }

    /// The session or the connection ended: a partition that was using it is offline; one
    /// that waits for something else (an operator, a reset under way, a pause, a reload) keeps
    /// its state, so nothing an operator or a script keys on is hidden by a dropped connection.
    private mutating func goOffline() {
        switch phase {
        case .starting, .connecting, .bootstrapping, .syncing: phase = .offline
        default: break
        }
    }
}
