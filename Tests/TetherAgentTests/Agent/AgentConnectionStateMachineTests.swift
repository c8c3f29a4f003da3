import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// ``AgentConnection/StateMachine`` phase by phase and input by input, without I/O: the
/// connection is a string, a partition a number, time instants a test picks. The pairs the
/// sequential loop cannot produce (an attempt due while one runs, `connected` or `attemptEnded`
/// without an attempt) trap and are not played here.
@Suite struct AgentConnectionStateMachineTests {
    typealias Machine = AgentConnection.StateMachine<String, Int>
    static let fatal = SyncError(.wrongProtocolVersion, "the server speaks protocol 9", action: .fatal)
    static let other = SyncError(.wrongProtocolVersion, "another fatal one", action: .fatal)
    static let retry = SyncError(.otherSessionError, "try again", action: .retry)
    let t0 = ContinuousClock.now

    /// The phases, reached through the inputs only.
    enum Phase: CaseIterable { case idle, connecting, connectingWithStop, connected, connectedWithStop, closing, backingOff, backingOffWithStop, stopped }

    func make(_ phase: Phase) -> (Machine, AsyncStream<Int>) {
        var machine = Machine(backoff: Backoff(initial: .seconds(1), maximum: .seconds(8), jitter: 0))
        let (stream, additions) = AsyncStream.makeStream(of: Int.self)
        var random = SeededRandom(seed: 1)
        switch phase {
        case .idle: break
        case .connecting: _ = machine.attemptDue(at: t0)
        case .connectingWithStop:
            _ = machine.attemptDue(at: t0)
            _ = machine.connectionFailed(Self.fatal)
        case .connected, .connectedWithStop, .closing:
            _ = machine.attemptDue(at: t0)
            machine.connected("c1", additions: additions, at: t0 + .seconds(1))
            if phase == .connectedWithStop { _ = machine.connectionFailed(Self.fatal) }
            if phase == .closing { _ = machine.reloaded(serverChanged: true) }
        case .backingOff, .backingOffWithStop:
            _ = machine.attemptDue(at: t0)
            if phase == .backingOffWithStop { _ = machine.connectionFailed(Self.fatal) }
            _ = machine.attemptEnded(at: t0 + .seconds(1), cancelled: false, using: &random)
        case .stopped:
            _ = machine.connectionFailed(Self.fatal)
        }
        return (machine, stream)
    }

    // MARK: attemptDue

    @Test func anAttemptIsDueFromIdleOrABackoffAndWaitsWhenStopped() {
        for phase in [Phase.idle, .backingOff] {
            var (machine, _) = make(phase)
            #expect(machine.attemptDue(at: t0 + .seconds(9)) == .connect, "\(phase)")
            guard case .connecting(let attempt) = machine.phase else { Issue.record("\(phase): \(machine.phase)"); continue }
            #expect(attempt.since == t0 + .seconds(9) && !attempt.reportedHung && attempt.stop == nil)
            #expect(machine.connection == nil)
        }
        var (backingOff, _) = make(.backingOffWithStop)
        #expect(backingOff.attemptDue(at: t0 + .seconds(9)) == .waitForReload, "the stop is taken when the wait ends")
        guard case .stopped(let error) = backingOff.phase else { Issue.record("\(backingOff.phase)"); return }
        #expect(error == Self.fatal)
        var (stopped, _) = make(.stopped)
        #expect(stopped.attemptDue(at: t0) == .waitForReload)
        #expect(stopped.attemptDue(at: t0) == .waitForReload, "until a reload")
    }

    // MARK: connected

    /// `retry-now` ends a backoff only: not a stop's wait (a retry would meet the same error),
    /// not an attempt or a connection.
    @Test func onlyABackoffWithoutAStopIsEndedByRetryNow() {
        for phase in Phase.allCases {
            #expect(make(phase).0.isBackingOff == (phase == .backingOff), "\(phase)")
        }
    }

    @Test func connectedCarriesTheConnectionAndAStopTheAttemptHad() {
        for phase in [Phase.connecting, .connectingWithStop] {
            var (machine, _) = make(phase)
            let (_, additions) = AsyncStream.makeStream(of: Int.self)
            machine.connected("c2", additions: additions, at: t0 + .seconds(2))
            guard case .connected(let connected) = machine.phase else { Issue.record("\(machine.phase)"); continue }
            #expect(connected.connection == "c2" && connected.since == t0 + .seconds(2) && !connected.closingForReconnect)
            #expect(connected.stop == (phase == .connectingWithStop ? Self.fatal : nil))
            #expect(machine.connection == "c2")
        }
    }

    // MARK: sessionsStarted

    @Test func readyIsDueOnceInEveryPhase() {
        for phase in Phase.allCases {
            var (machine, _) = make(phase)
            let first = machine.sessionsStarted()
            let second = machine.sessionsStarted()
            #expect(first, "\(phase)")
            #expect(!second, "\(phase): once")
        }
    }

    // MARK: partitionAdded

    @Test func anAddedPartitionStartsOnAnOpenConnectionOnly() async {
        for phase in Phase.allCases {
            let (machine, stream) = make(phase)
            switch machine.partitionAdded(7) {
            case .start(let partition, let additions):
                #expect([Phase.connected, .connectedWithStop].contains(phase), "\(phase)")
                #expect(partition == 7)
                additions.yield(partition)
                additions.finish()
                #expect(await stream.first { _ in true } == 7, "the connection's own additions")
            case .later:
                #expect(![Phase.connected, .connectedWithStop].contains(phase), "\(phase): closing or not connected")
            }
        }
    }

    // MARK: connectionEnding

    @Test func onlyAnOpenConnectionNotClosedByTheAgentIsClosedByTheServer() {
        for phase in Phase.allCases {
            let (machine, _) = make(phase)
            let open = [Phase.connected, .connectedWithStop].contains(phase)
            #expect(machine.connectionEnding(cancelled: false) == open, "\(phase)")
            #expect(!machine.connectionEnding(cancelled: true), "\(phase): a cancellation is no server's doing")
        }
    }

    // MARK: connectionFailed

    @Test func aFatalErrorStopsOnceInEveryPhase() {
        for phase in Phase.allCases {
            var (machine, _) = make(phase)
            let alreadyStopped = [Phase.connectingWithStop, .connectedWithStop, .backingOffWithStop, .stopped].contains(phase)
            #expect(machine.connectionFailed(Self.other) == (alreadyStopped ? .ignore : .logStop(Self.other)), "\(phase)")
            #expect(machine.connectionFailed(Self.other) == .ignore, "\(phase): logged once")
            switch machine.phase {
            case .idle: Issue.record("idle after a fatal error")
            case .stopped(let error): #expect(error == (phase == .idle ? Self.other : Self.fatal), "\(phase)")
            case .connecting(let attempt): #expect(attempt.stop != nil)
            case .connected(let connected): #expect(connected.stop != nil)
            case .backingOff(_, let stop): #expect(stop != nil)
            case .enrolling, .enrollmentStopped: Issue.record("\(phase): an enrollment phase after a fatal error")
            }
        }
    }

    @Test func anErrorThatDoesNotStopIsIgnoredInEveryPhase() {
        for phase in Phase.allCases {
            var (machine, _) = make(phase)
            let before = "\(machine.phase)"
            #expect(machine.connectionFailed(Self.retry) == .ignore, "\(phase)")
            #expect("\(machine.phase)" == before)
        }
    }

    // MARK: reloaded

    @Test func aReloadThatChangesNothingLeavesEveryPhaseAlone() {
        for phase in [Phase.idle, .connecting, .connected, .closing, .backingOff] {
            var (machine, _) = make(phase)
            let before = "\(machine.phase)"
            guard case .none = machine.reloaded(serverChanged: false) else { Issue.record("\(phase)"); continue }
            #expect("\(machine.phase)" == before, "\(phase)")
        }
    }

    @Test func aChangedServerOrAStopMakesTheAgentConnectAnew() {
        for phase in Phase.allCases {
            for serverChanged in [true, false] {
                let stopped = [Phase.connectingWithStop, .connectedWithStop, .backingOffWithStop, .stopped].contains(phase)
                guard serverChanged || stopped else { continue }
                var (machine, _) = make(phase)
                let action = machine.reloaded(serverChanged: serverChanged)
                switch (phase, action) {
                case (.connected, .closeAndWake(let connection, _)), (.connectedWithStop, .closeAndWake(let connection, _)),
                    (.closing, .closeAndWake(let connection, _)):
                    #expect(connection == "c1")
                    guard case .connected(let connected) = machine.phase else { Issue.record("\(machine.phase)"); continue }
                    #expect(connected.closingForReconnect && connected.stop == nil)
                case (.idle, .wake), (.backingOff, .wake), (.backingOffWithStop, .wake):
                    if case .backingOff(_, let stop) = machine.phase { #expect(stop == nil) }
                case (.connecting, .wake), (.connectingWithStop, .wake):
                    guard case .connecting(let attempt) = machine.phase else { Issue.record("\(machine.phase)"); continue }
                    #expect(attempt.stop == nil, "the attempt goes on; its failure's backoff ends at once")
                case (.stopped, .wake):
                    guard case .idle = machine.phase else { Issue.record("\(machine.phase)"); continue }
                    #expect(machine.attemptDue(at: t0) == .connect)
                default:
                    Issue.record("\(phase), server changed \(serverChanged): \(action)")
                }
            }
        }
    }

    // MARK: attemptEnded

    @Test func anEndedAttemptBacksOffAndKeepsAStopForTheWaitsEnd() {
        for phase in [Phase.connecting, .connectingWithStop, .connected, .connectedWithStop, .closing] {
            var (machine, _) = make(phase)
            var random = SeededRandom(seed: 2)
            let end = machine.attemptEnded(at: t0 + .seconds(3), cancelled: false, using: &random)
            #expect(end == .backOff(.seconds(1)), "\(phase): the first delay of the series")
            guard case .backingOff(let until, let stop) = machine.phase else { Issue.record("\(machine.phase)"); continue }
            #expect(until == t0 + .seconds(4))
            #expect((stop != nil) == [Phase.connectingWithStop, .connectedWithStop].contains(phase), "\(phase)")
            #expect(machine.connection == nil)
        }
    }

    @Test func aCancelledAttemptEndsTheLoopWithoutABackoff() {
        for phase in [Phase.connecting, .connected] {
            var (machine, _) = make(phase)
            var random = SeededRandom(seed: 3)
            #expect(machine.attemptEnded(at: t0 + .seconds(3), cancelled: true, using: &random) == .finish)
            #expect(machine.backoff.attempt == 0)
            guard case .idle = machine.phase else { Issue.record("\(machine.phase)"); continue }
        }
    }

    @Test func failedAttemptsGrowTheBackoffAndAHealthyConnectionResetsIt() {
        var machine = Machine(backoff: Backoff(initial: .seconds(1), maximum: .seconds(8), jitter: 0))
        var random = SeededRandom(seed: 4)
        var now = t0
        var delays: [Machine.AttemptEnd] = []
        for _ in 0..<5 {
            _ = machine.attemptDue(at: now)
            delays.append(machine.attemptEnded(at: now, cancelled: false, using: &random))
            now += .seconds(10)
        }
        #expect(delays == [1, 2, 4, 8, 8].map { Machine.AttemptEnd.backOff(.seconds($0)) })
        let (_, additions) = AsyncStream.makeStream(of: Int.self)
        _ = machine.attemptDue(at: now)
        machine.connected("short", additions: additions, at: now)
        #expect(machine.attemptEnded(at: now + .seconds(30), cancelled: false, using: &random) == .backOff(.seconds(8)), "30 s is not long enough")
        _ = machine.attemptDue(at: now + .seconds(40))
        machine.connected("long", additions: additions, at: now + .seconds(40))
        #expect(machine.attemptEnded(at: now + .seconds(71), cancelled: false, using: &random) == .backOff(.seconds(1)), "a new series")
    }

    // MARK: watchdogCheck

    @Test func onlyAnAttemptConnectingPastTheLimitHasHungAndIsReportedOnce() {
        for phase in Phase.allCases {
            var (machine, _) = make(phase)
            let connecting = [Phase.connecting, .connectingWithStop].contains(phase)
            #expect(machine.watchdogCheck(at: t0 + .seconds(30), limit: .seconds(30)) == .healthy, "\(phase): not past the limit")
            #expect(machine.watchdogCheck(at: t0 + .seconds(31), limit: .seconds(30)) == (connecting ? .hung(report: true) : .healthy), "\(phase)")
            #expect(machine.watchdogCheck(at: t0 + .seconds(32), limit: .seconds(30)) == (connecting ? .hung(report: false) : .healthy), "\(phase): reported once")
        }
        var (machine, _) = make(.connecting)
        _ = machine.watchdogCheck(at: t0 + .seconds(31), limit: .seconds(30))
        var random = SeededRandom(seed: 5)
        _ = machine.attemptEnded(at: t0 + .seconds(40), cancelled: false, using: &random)
        _ = machine.attemptDue(at: t0 + .seconds(41))
        #expect(machine.watchdogCheck(at: t0 + .seconds(72), limit: .seconds(30)) == .hung(report: true), "each attempt is reported")
    }

    @Test func theAttemptLimitIsTheWatchdogsButNeverUnder30Seconds() {
        #expect(AgentConnection.attemptLimit(.seconds(10)) == .seconds(30))
        #expect(AgentConnection.attemptLimit(.seconds(90)) == .seconds(90))
    }
}
