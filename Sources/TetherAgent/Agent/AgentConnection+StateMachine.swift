import TetherProtocol

extension AgentConnection {
    /// The agent's connection to the server as one value: each phase carries what it knows,
    /// one method per input, each returning only what the executor (``AgentConnection``) can be
    /// asked to do about it. Pure: time comes in as instants, randomness as a generator.
    /// Generic over the connection and the partitions only so that its tests need neither.
    ///
    /// ```text
    /// idle ─attemptDue─▶ connecting ─connected─▶ connected
    ///                     │   ▲                      │
    ///       attemptEnded  │   │ attemptDue            │ attemptEnded (closed, cut, reconnect)
    ///                     ▼   │                      ▼
    ///                    backing off (until; a stop an error asked for) ◀──┘
    ///                          │ attemptDue with a stop
    ///                          ▼
    ///                        stopped (105) ─reloaded─▶ idle
    /// ```
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

        enum WatchdogVerdict: Sendable, Equatable {
            case healthy
            /// The attempt hung; `report`: the first time this attempt is found so (log it).
            case hung(report: Bool)
        }

        private(set) var phase: Phase = .idle
        private(set) var backoff: Backoff
        /// READY=1 went out (the first attempt's outcome, or a stop).
        private(set) var started = false
        /// How long a connection must have stayed up for the next failure to start a new series.
        static var healthyConnection: Duration { .seconds(30) }

        init(backoff: Backoff = Backoff()) {
            self.backoff = backoff
        }

        /// The connection partitions may use now.
        var connection: Connection? {
            if case .connected(let connected) = phase { connected.connection } else { nil }
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
            case .stopped:
                return .waitForReload
            case .connecting, .connected:
                preconditionFailure("a connection attempt is due while one runs")
            }
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
            switch phase {
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
            case .idle, .backingOff, .stopped:
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
