import Testing
@testable import TetherServer

/// The console sign-in's per-peer throttle (``SignInThrottle``), driven with made-up instants:
/// free failures, doubling waits with a cap, success clearing, the bounded table, the folded log.
@Suite struct SignInThrottleTests {
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }

    @Test func aFewFailuresAreFreeThenEachDoublesTheWaitUpToTheCap() {
        var throttle = SignInThrottle()
        for failure in 1...SignInThrottle.freeFailures {
            #expect(throttle.admit("10.0.0.1", now: at(0)).0 == .tryIt)
            #expect(throttle.failed("10.0.0.1", now: at(0)).wait == nil, "failure \(failure) is free")
        }
        #expect(throttle.failed("10.0.0.1", now: at(0)).wait == .seconds(1))
        #expect(throttle.admit("10.0.0.1", now: at(0.2)).0 == .wait(retryAfter: 1))
        #expect(throttle.admit("10.0.0.1", now: at(1)).0 == .tryIt, "the wait is over")
        #expect(throttle.failed("10.0.0.1", now: at(1)).wait == .seconds(2))
        #expect(throttle.admit("10.0.0.1", now: at(1.5)).0 == .wait(retryAfter: 2))
        #expect(throttle.failed("10.0.0.1", now: at(3)).wait == .seconds(4))
        // Waiting attempts do not count as failures: the next wait still doubles only once.
        for _ in 0..<50 { _ = throttle.admit("10.0.0.1", now: at(4)) }
        #expect(throttle.failed("10.0.0.1", now: at(7)).wait == .seconds(8))
        let waits = (SignInThrottle.freeFailures + 1...SignInThrottle.freeFailures + 40).map { SignInThrottle.wait(afterFailures: $0)! }
        #expect(Array(waits.prefix(9)) == [1, 2, 4, 8, 16, 32, 64, 128, 256].map { Duration.seconds($0) })
        #expect(waits.dropFirst(9).allSatisfy { $0 == SignInThrottle.maximumWait } && SignInThrottle.maximumWait == .seconds(300))
        // Another peer is not touched.
        #expect(throttle.admit("10.0.0.2", now: at(7)).0 == .tryIt)
    }

    @Test func theRightTokenClearsThePeer() {
        var throttle = SignInThrottle()
        for _ in 0...SignInThrottle.freeFailures { _ = throttle.failed("p", now: at(0)) }
        #expect(throttle.admit("p", now: at(0)).0 != .tryIt)
        #expect(throttle.admit("p", now: at(1)).0 == .tryIt)
        throttle.succeeded("p")
        #expect(throttle.peers["p"] == nil)
        #expect(throttle.failed("p", now: at(2)).wait == nil, "free failures again")
    }

    @Test func theTableIsBoundedAndTheOldestPeerGoes() {
        var throttle = SignInThrottle()
        for i in 0..<(SignInThrottle.capacity + 100) {
            _ = throttle.failed("peer-\(i)", now: at(Double(i)))
        }
        #expect(throttle.peers.count == SignInThrottle.capacity)
        #expect(throttle.peers["peer-0"] == nil && throttle.peers["peer-99"] == nil)
        #expect(throttle.peers["peer-100"] != nil && throttle.peers["peer-\(SignInThrottle.capacity + 99)"] != nil)
        // A peer seen again lately is kept over one seen long ago.
        _ = throttle.failed("peer-100", now: at(10_000))
        _ = throttle.failed("new", now: at(10_001))
        #expect(throttle.peers["peer-100"] != nil && throttle.peers["peer-101"] == nil)
    }

    @Test func theLogIsFoldedToOneLinePerPeerPerMinute() {
        var throttle = SignInThrottle()
        let first = throttle.failed("192.0.2.7", now: at(0)).log
        #expect(first == SignInThrottle.LogLine(peer: "192.0.2.7", message: "console sign-in refused for 192.0.2.7: the admin token was not accepted"))
        var lines: [SignInThrottle.LogLine] = []
        // Attempts every half second for two minutes: failures when allowed, 429s while waiting.
        for step in 1...240 {
            let now = at(Double(step) / 2)
            let (admission, line) = throttle.admit("192.0.2.7", now: now)
            if let line { lines.append(line) }
            if admission == .tryIt, let line = throttle.failed("192.0.2.7", now: now).log { lines.append(line) }
        }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.allSatisfy { $0.message.hasPrefix("console sign-in refused for 192.0.2.7: ") && $0.message.contains(" failures in the last 60 s") })
        #expect(lines.first?.message.contains("attempts answered 429 while it waited") == true, "\(lines)")
        // Another peer's first failure is logged at once.
        #expect(throttle.failed("192.0.2.8", now: at(120)).log != nil)
    }
}
