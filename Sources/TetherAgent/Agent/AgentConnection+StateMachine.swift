import TetherProtocol

extension AgentConnection {
    /// The agent's connection to the server as one value: each phase carries what it knows,
    /// one method per input, each returning only what the executor (``AgentConnection``) can be
    /// asked to do about it. Pure: time comes in as instants, randomness as a generator.
    /// Generic over the connection and the partitions only so that its tests need neither.
    ///
    /// ```text
    /// idle ─attemptDue─▶ connecting ─connected─▶ connected
    ///                     │   ▲  │ credentialChecked   │
    ///       attemptEnded  │   │  ├─enroll─▶ enrolling ─enrolled─▶ connecting
    ///                     │   │  │            │ refused (transient: back off; else ─▶ enrollment stopped)
    ///                     │   │  └─stop (a cloned credential, no key) ─▶ enrollment stopped ─reloaded─▶ idle
    ///                     ▼   │ attemptDue            │ attemptEnded (closed, cut, reconnect)
    ///                    backing off (until; a stop an error asked for) ◀──┘
    ///                          │ attemptDue with a stop
    ///                          ▼
    ///                        stopped (105) ─reloaded─▶ idle
    /// ```
    ///
    /// Each attempt starts with the credential check (``CredentialDecision``): a missing,
    /// empty or cloned credential with an enrollment key set enrolls first (issue 48).
    ///
    /// The loop is sequential: `attemptDue` comes only when no attempt runs, `connected` and
    /// `attemptEnded` only while one does; those pairs are programming errors and trap.
    struct StateMachine<Connection: Sendable, Partition: Sendable>: Sendable {
        enum Phase: Sendable {
            /// No attempt made yet (or the loop ended).
            case idle
            case connecting(Connecting)
            case connected(Connected)
            /// Waiting before the next attempt; `stop`: what a connection-level error asked for,
            /// taken when the wait ends (so the wait's log line comes first, as it always did).
            case backingOff(until: ContinuousClock.Instant, stop: SyncError?)
            /// Syncing stops until the configuration is reloaded (105).
            case stopped(SyncError)
            /// An enrollment is under way (the credential check asked for one).
            case enrolling(Enrolling)
            /// The device has no credential it may use and enrolling cannot give it one without an
            /// operator (a refused key, a cloned credential without a key): until a reload.
            case enrollmentStopped(EnrollmentError)
        }

        struct Enrolling: Sendable {
            var since: ContinuousClock.Instant
            var reason: EnrollmentReason
        }

        /// An attempt that has not completed its WebSocket upgrade yet.
        struct Connecting: Sendable {
            var since: ContinuousClock.Instant
            /// The watchdog check said it hung, and the log said so (once per attempt).
            var reportedHung = false
            var stop: SyncError? = nil
        }

        struct Connected: Sendable {
            var connection: Connection
            /// Partitions added by a reload while connected: the connection's task group runs them.
            var additions: AsyncStream<Partition>.Continuation
            var since: ContinuousClock.Instant
            /// The agent closes the connection itself (a reload changed the server): not a sync error.
            var closingForReconnect = false
            var stop: SyncError? = nil
        }

        enum AttemptStep: Sendable, Equatable {
            case connect
            /// Stopped: wait for a reload to wake the loop.
            case waitForReload
        }

        enum AttemptEnd: Sendable, Equatable {
            /// Wait `delay` (ended early by a reload's wake) before the next attempt.
            case backOff(Duration)
            /// The loop was cancelled: it ends.
            case finish
        }

        enum Addition: Sendable {
            case start(Partition, on: AsyncStream<Partition>.Continuation)
            /// Not connected (or closing): the next connection starts it with the others.
            case later
        }

        enum ReloadAction: Sendable {
            case none
            /// End a backoff or the wait of a stop early (kept for the next wait when none runs).
            case wake
            /// Close the connection and end its additions, then wake the wait that follows.
            case closeAndWake(Connection, additions: AsyncStream<Partition>.Continuation)
        }

        enum FailureAction: Sendable, Equatable {
            /// Log that syncing stops until a reload.
            case logStop(SyncError)
            /// Not an error that stops the connection, or already stopped.
            case ignore
        }

        enum CredentialStep: Sendable, Equatable {
            /// Bind with the token file as it is.
            case connect
            /// Enroll first, then (``enrollmentEnded(_:at:cancelled:using:)``) connect.
            case enroll(EnrollmentReason)
            /// No attempt until a reload; `log`: not logged yet.
            case stop(EnrollmentError, log: Bool)
        }

        enum EnrollmentEnd: Sendable, Equatable {
            /// The credential is written: connect now.
            case connect
            /// Wait `delay` (at least the server's `Retry-After`) before the next attempt; `log`:
            /// the first failure of its kind in a row (a repeat is not logged again).
            case backOff(Duration, log: Bool)
            /// No attempt until a reload; `log` as for a backoff.
            case stop(log: Bool)
            /// The loop was cancelled.
            case finish
        }

        enum WatchdogVerdict: Sendable, Equatable {
            case healthy
            /// The attempt hung; `report`: the first time this attempt is found so (log it).
            case hung(report: Bool)
        }

        private(set) var phase: Phase = .idle
        private(set) var backoff: Backoff
        /// READY=1 went out (the first attempt's outcome, or a stop).
        private(set) var started = false
        /// The code of the last enrollment failure logged, so that a repeat is not logged again
        /// (cleared by an enrollment that succeeded and by a reload).
        private(set) var loggedEnrollmentFailure: String? = nil
        /// How long a connection must have stayed up for the next failure to start a new series.
        static var healthyConnection: Duration { .seconds(30) }

        init(backoff: Backoff = Backoff()) {
            self.backoff = backoff
        }

        /// The connection partitions may use now.
        var connection: Connection? {
            if case .connected(let connected) = phase { connected.connection } else { nil }
        }

        /// A backoff runs that a wake ends early (not a stop's: that waits for a reload).
        var isBackingOff: Bool {
            if case .backingOff(until: _, stop: nil) = phase { true } else { false }
        }

        /// The loop is ready for its next attempt.
        mutating func attemptDue(at now: ContinuousClock.Instant) -> AttemptStep {
            switch phase {
            case .idle, .backingOff(until: _, stop: nil):
                phase = .connecting(Connecting(since: now))
                return .connect
            case .backingOff(until: _, stop: let stop?):
                phase = .stopped(stop)
                return .waitForReload
            case .stopped, .enrollmentStopped:
                return .waitForReload
            case .connecting, .connected, .enrolling:
                preconditionFailure("a connection attempt is due while one runs")
            }
        }

        /// The attempt's credential check (``CredentialDecision``) decided.
        mutating func credentialChecked(_ decision: CredentialDecision, at now: ContinuousClock.Instant) -> CredentialStep {
            guard case .connecting = phase else { preconditionFailure("a credential check without an attempt") }
            switch decision {
            case .useToken:
                return .connect
            case .enroll(let reason):
                phase = .enrolling(Enrolling(since: now, reason: reason))
                return .enroll(reason)
            case .stop(let error):
                phase = .enrollmentStopped(error)
                return .stop(error, log: noteLogged(error))
            }
        }

        /// The enrollment ended: enrolled (the credential written), or failed.
        mutating func enrollmentEnded(
            _ outcome: Result<Void, EnrollmentError>, at now: ContinuousClock.Instant, cancelled: Bool,
            using random: inout some RandomNumberGenerator
        ) -> EnrollmentEnd {
            guard case .enrolling(let enrolling) = phase else { preconditionFailure("an enrollment ended that did not run") }
            if cancelled {
                phase = .idle
                return .finish
            }
            switch outcome {
            case .success:
                loggedEnrollmentFailure = nil
                backoff.reset()
                phase = .connecting(Connecting(since: now))
                return .connect
            case .failure(let error) where error.isTransient || enrolling.reason == .credentialRefused:
                // An enrollment after every credential was refused does not stop the agent:
                // the server may come to accept the token file's again (its database put back
                // right), and the next attempt binds with it.
                let log = noteLogged(error)
                let delay = backoff.next(floor: error.retryAfter ?? .zero, using: &random)
                phase = .backingOff(until: now + delay, stop: nil)
                return .backOff(delay, log: log)
            case .failure(let error):
                let log = noteLogged(error)
                phase = .enrollmentStopped(error)
                return .stop(log: log)
            }
        }

        /// Whether `error` is to be logged (not the same as the last one logged); notes it.
        private mutating func noteLogged(_ error: EnrollmentError) -> Bool {
            defer { loggedEnrollmentFailure = error.code }
            return loggedEnrollmentFailure != error.code
        }

        /// The WebSocket is open and the hello sent.
        mutating func connected(_ connection: Connection, additions: AsyncStream<Partition>.Continuation, at now: ContinuousClock.Instant) {
            guard case .connecting(let attempt) = phase else { preconditionFailure("connected without an attempt") }
            phase = .connected(Connected(connection: connection, additions: additions, since: now, stop: attempt.stop))
        }

        /// Every partition's session has started (or the connection ended, or syncing stopped):
        /// true once, when READY=1 is due.
        mutating func sessionsStarted() -> Bool {
            defer { started = true }
            return !started
        }

        /// A reload added a partition.
        func partitionAdded(_ partition: Partition) -> Addition {
            guard case .connected(let connected) = phase, !connected.closingForReconnect else { return .later }
            return .start(partition, on: connected.additions)
        }

        /// The server refused every credential the device has and it holds an enrollment key:
        /// the connection closes (or a backoff ends) so that the next attempt's credential check
        /// enrolls (``CredentialDecision``).
        mutating func reenrollmentDue() -> ReloadAction {
            switch phase {
            case .connected(var connected) where !connected.closingForReconnect:
                connected.closingForReconnect = true
                phase = .connected(connected)
                return .closeAndWake(connected.connection, additions: connected.additions)
            case .backingOff(until: _, stop: nil):
                return .wake
            case .idle, .connecting, .connected, .backingOff, .stopped, .enrolling, .enrollmentStopped:
                return .none
            }
        }

        /// The connection's partitions ended: true when the server closed it (not the agent, not a
        /// cancellation), which is a sync error of its own when it gave no reason.
        func connectionEnding(cancelled: Bool) -> Bool {
            guard case .connected(let connected) = phase else { return false }
            return !cancelled && !connected.closingForReconnect
        }

        /// A connection-level error the whole agent must follow (105 stops syncing until a reload).
        mutating func connectionFailed(_ error: SyncError) -> FailureAction {
            guard error.action == .fatal else { return .ignore }
            switch phase {
            case .enrolling, .enrollmentStopped:
                // No connection: no connection-level error can come (and a stop is one already).
                return .ignore
            case .idle:
                phase = .stopped(error)
            case .connecting(var attempt) where attempt.stop == nil:
                attempt.stop = error
                phase = .connecting(attempt)
            case .connected(var connected) where connected.stop == nil:
                connected.stop = error
                phase = .connected(connected)
            case .backingOff(until: let until, stop: nil):
                phase = .backingOff(until: until, stop: error)
            case .connecting, .connected, .backingOff, .stopped:
                return .ignore
            }
            return .logStop(error)
        }

        /// The configuration was reloaded: a changed server, or a stop, makes the agent connect anew.
        mutating func reloaded(serverChanged: Bool) -> ReloadAction {
            // A refusal is logged again after a reload: the operator changed something.
            loggedEnrollmentFailure = nil
            switch phase {
            case .enrolling:
                // The post cannot be recalled; the wake is kept for the wait after a failure.
                return serverChanged ? .wake : .none
            case .enrollmentStopped:
                phase = .idle
                return .wake
            case .idle:
                return serverChanged ? .wake : .none
            case .connecting(var attempt):
                guard serverChanged || attempt.stop != nil else { return .none }
                attempt.stop = nil
                phase = .connecting(attempt)
                return .wake
            case .connected(var connected):
                guard serverChanged || connected.stop != nil else { return .none }
                connected.stop = nil
                connected.closingForReconnect = true
                phase = .connected(connected)
                return .closeAndWake(connected.connection, additions: connected.additions)
            case .backingOff(let until, let stop):
                guard serverChanged || stop != nil else { return .none }
                phase = .backingOff(until: until, stop: nil)
                return .wake
            case .stopped:
                phase = .idle
                return .wake
            }
        }

        /// The attempt ended (failed, or its connection closed). A connection that stayed up
        /// for ``healthyConnection`` starts a new backoff series.
        mutating func attemptEnded(
            at now: ContinuousClock.Instant, cancelled: Bool, using random: inout some RandomNumberGenerator
        ) -> AttemptEnd {
            let stop: SyncError?
            switch phase {
            case .connecting(let attempt):
                stop = attempt.stop
            case .connected(let connected):
                if now - connected.since > Self.healthyConnection { backoff.reset() }
                stop = connected.stop
            case .idle, .backingOff, .stopped, .enrolling, .enrollmentStopped:
                preconditionFailure("an attempt ended that did not run")
            }
            if cancelled {
                phase = .idle
                return .finish
            }
            let delay = backoff.next(using: &random)
            phase = .backingOff(until: now + delay, stop: stop)
            return .backOff(delay)
        }

        /// The watchdog's check: an attempt still connecting after `limit` has hung.
        mutating func watchdogCheck(at now: ContinuousClock.Instant, limit: Duration) -> WatchdogVerdict {
            guard case .connecting(var attempt) = phase, now - attempt.since > limit else { return .healthy }
            defer {
                attempt.reportedHung = true
                phase = .connecting(attempt)
            }
            return .hung(report: !attempt.reportedHung)
        }
    }
}
