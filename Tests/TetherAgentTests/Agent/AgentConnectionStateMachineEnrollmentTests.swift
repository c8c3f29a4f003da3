import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// ``AgentConnection/StateMachine``'s credential check and enrollment (issue 48), without I/O:
/// each input in the enrollment phases, and the phases the check leads to.
@Suite struct AgentConnectionStateMachineEnrollmentTests {
    typealias Machine = AgentConnection.StateMachine<String, Int>
    let t0 = ContinuousClock.now
    static let unavailable = EnrollmentError.refused(code: "unavailable", message: "m", hint: nil, status: 503, retryAfter: nil)
    static let limited = EnrollmentError.refused(code: "rate_limited", message: "m", hint: nil, status: 429, retryAfter: .seconds(20))
    static let unknownKey = EnrollmentError.refused(code: "unknown_key", message: "m", hint: nil, status: 401, retryAfter: nil)
    static let cloned = EnrollmentError.clonedCredential(tokenFile: "/t", issuedTo: "a", device: "b")

    func machine() -> Machine { Machine(backoff: Backoff(initial: .seconds(1), maximum: .seconds(8), jitter: 0)) }

    /// A machine enrolling (an attempt whose check asked for an enrollment).
    func enrolling() -> Machine {
        var machine = machine()
        _ = machine.attemptDue(at: t0)
        #expect(machine.credentialChecked(.enroll(.noToken), at: t0) == .enroll(.noToken))
        return machine
    }

    @Test func aUsableTokenConnectsAsBefore() {
        var machine = machine()
        _ = machine.attemptDue(at: t0)
        #expect(machine.credentialChecked(.useToken, at: t0) == .connect)
        guard case .connecting(let attempt) = machine.phase else { Issue.record("\(machine.phase)"); return }
        #expect(attempt.since == t0)
    }

    @Test func anEnrollmentThatSucceedsConnectsAtOnceWithANewBackoffSeries() {
        var machine = enrolling()
        guard case .enrolling(let enrolling) = machine.phase else { Issue.record("\(machine.phase)"); return }
        #expect(enrolling.reason == .noToken && enrolling.since == t0)
        #expect(machine.connection == nil && machine.partitionAdded(1).isLater && !machine.connectionEnding(cancelled: false))
        #expect(machine.watchdogCheck(at: t0 + .seconds(600), limit: .seconds(30)) == .healthy, "the post has its own deadline")
        var random = SeededRandom(seed: 1)
        #expect(machine.enrollmentEnded(.success(()), at: t0 + .seconds(1), cancelled: false, using: &random) == .connect)
        guard case .connecting(let attempt) = machine.phase else { Issue.record("\(machine.phase)"); return }
        #expect(attempt.since == t0 + .seconds(1) && machine.backoff.attempt == 0)
    }

    @Test func transientFailuresBackOffLogOnceAndHonourRetryAfter() {
        var machine = enrolling()
        var random = SeededRandom(seed: 2)
        var ends: [Machine.EnrollmentEnd] = []
        var now = t0
        for error in [Self.unavailable, Self.unavailable, Self.limited, Self.unavailable] {
            if !ends.isEmpty {
                #expect(machine.attemptDue(at: now) == .connect)
                _ = machine.credentialChecked(.enroll(.noToken), at: now)
            }
            ends.append(machine.enrollmentEnded(.failure(error), at: now, cancelled: false, using: &random))
            guard case .backingOff(_, nil) = machine.phase else { Issue.record("\(machine.phase)"); return }
            now += .seconds(30)
        }
        #expect(ends == [.backOff(.seconds(1), log: true), .backOff(.seconds(2), log: false), .backOff(.seconds(20), log: true), .backOff(.seconds(8), log: true)])
    }

    @Test func aPermanentRefusalStopsUntilAReloadWithoutSpinning() {
        var machine = enrolling()
        var random = SeededRandom(seed: 3)
        #expect(machine.enrollmentEnded(.failure(Self.unknownKey), at: t0, cancelled: false, using: &random) == .stop(log: true))
        guard case .enrollmentStopped(let error) = machine.phase else { Issue.record("\(machine.phase)"); return }
        #expect(error == Self.unknownKey)
        #expect(machine.attemptDue(at: t0 + .seconds(1)) == .waitForReload)
        #expect(machine.attemptDue(at: t0 + .seconds(2)) == .waitForReload, "until a reload")
        #expect(machine.connectionFailed(SyncError(.wrongProtocolVersion, "x", action: .fatal)) == .ignore)
        guard case .wake = machine.reloaded(serverChanged: false) else { Issue.record("a reload must wake"); return }
        guard case .idle = machine.phase else { Issue.record("\(machine.phase)"); return }
        #expect(machine.attemptDue(at: t0 + .seconds(3)) == .connect)
        #expect(machine.credentialChecked(.enroll(.noToken), at: t0 + .seconds(3)) == .enroll(.noToken))
        #expect(
            machine.enrollmentEnded(.failure(Self.unknownKey), at: t0 + .seconds(4), cancelled: false, using: &random) == .stop(log: true),
            "logged again after a reload")
    }

    /// An enrollment because every credential was refused never stops the agent: a refusal
    /// (the key expired, the device revoked) backs off, and the next attempt binds again.
    @Test func aRefusedReenrollmentBacksOffInsteadOfStopping() {
        var machine = machine()
        var random = SeededRandom(seed: 5)
        _ = machine.attemptDue(at: t0)
        #expect(machine.credentialChecked(.enroll(.credentialRefused), at: t0) == .enroll(.credentialRefused))
        #expect(machine.enrollmentEnded(.failure(Self.unknownKey), at: t0, cancelled: false, using: &random) == .backOff(.seconds(1), log: true))
        guard case .backingOff(_, nil) = machine.phase else { Issue.record("\(machine.phase)"); return }
        #expect(machine.attemptDue(at: t0 + .seconds(1)) == .connect)
        #expect(machine.credentialChecked(.useToken, at: t0 + .seconds(1)) == .connect)
    }

    /// Every credential refused: a connected agent closes its connection so that the next
    /// attempt enrolls; a backoff ends; elsewhere nothing happens (the next check enrolls).
    @Test func aReenrollmentDueClosesTheConnectionOrEndsABackoff() {
        var machine = machine()
        var random = SeededRandom(seed: 6)
        guard case .none = machine.reenrollmentDue() else { Issue.record("idle"); return }
        _ = machine.attemptDue(at: t0)
        _ = machine.credentialChecked(.useToken, at: t0)
        guard case .none = machine.reenrollmentDue() else { Issue.record("connecting"); return }
        let (_, additions) = AsyncStream.makeStream(of: Int.self)
        machine.connected("connection", additions: additions, at: t0)
        guard case .closeAndWake(let closed, _) = machine.reenrollmentDue() else { Issue.record("connected"); return }
        #expect(closed == "connection")
        guard case .none = machine.reenrollmentDue() else { Issue.record("closing already"); return }
        #expect(!machine.connectionEnding(cancelled: false), "the agent closed it: not a server's close")
        _ = machine.attemptEnded(at: t0 + .seconds(1), cancelled: false, using: &random)
        guard case .wake = machine.reenrollmentDue() else { Issue.record("backing off"); return }
    }

    @Test func aClonedCredentialWithoutAKeyStopsAtTheCheck() {
        var machine = machine()
        _ = machine.attemptDue(at: t0)
        #expect(machine.credentialChecked(.stop(Self.cloned), at: t0) == .stop(Self.cloned, log: true))
        guard case .enrollmentStopped = machine.phase else { Issue.record("\(machine.phase)"); return }
        #expect(machine.attemptDue(at: t0) == .waitForReload)
    }

    @Test func aReloadWhileEnrollingKeepsTheWakeForAChangedServerOnly() {
        var machine = enrolling()
        guard case .none = machine.reloaded(serverChanged: false) else { Issue.record("an unchanged server"); return }
        guard case .wake = machine.reloaded(serverChanged: true) else { Issue.record("a changed server"); return }
        guard case .enrolling = machine.phase else { Issue.record("\(machine.phase)"); return }
    }

    @Test func aCancelledEnrollmentEndsTheLoop() {
        var machine = enrolling()
        var random = SeededRandom(seed: 4)
        #expect(machine.enrollmentEnded(.success(()), at: t0, cancelled: true, using: &random) == .finish)
        guard case .idle = machine.phase else { Issue.record("\(machine.phase)"); return }
    }

    @Test func readyIsDueOnceWhileEnrollingOrStopped() {
        var machine = enrolling()
        #expect(machine.sessionsStarted() && !machine.sessionsStarted())
    }
}

extension AgentConnection.StateMachine.Addition {
    var isLater: Bool {
        if case .later = self { return true }
        return false
    }
}
