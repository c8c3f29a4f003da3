import Testing
import TetherProtocol
@testable import TetherAgent

/// A deterministic generator so delays are reproducible.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Test func delaysGrowExponentiallyWithinJitterAndAreCapped() {
    var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(10), multiplier: 2, jitter: 0.3)
    var random = SeededGenerator(state: 42)
    let ceilings: [Double] = [0.5, 1, 2, 4, 8, 10, 10, 10]
    for ceiling in ceilings {
        let delay = backoff.next(using: &random).seconds
        #expect(delay <= ceiling + 1e-9)
        #expect(delay >= ceiling * 0.7 - 1e-9)
    }
}

@Test func jitterSpreadsAFleet() {
    var random = SeededGenerator(state: 7)
    let delays = (0..<100).map { _ in
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))
        return backoff.next(using: &random).seconds
    }
    #expect(Set(delays.map { ($0 * 1000).rounded() }).count > 50, "delays of different devices differ")
}

@Test func resetStartsOverAndHintsAreAFloor() {
    var backoff = Backoff(initial: .seconds(1), maximum: .seconds(60), jitter: 0)
    _ = backoff.next()
    _ = backoff.next()
    #expect(backoff.nextCeiling == .seconds(4))
    backoff.reset()
    #expect(backoff.next() == .seconds(1))
    #expect(backoff.next(floor: .seconds(30)) == .seconds(30))
}

@Test func reactionsFollowTheServersAction() {
    #expect(SyncErrorReaction(SyncError(.divergingHistories, "x")) == .reset)
    #expect(SyncErrorReaction(SyncError(.permissionDenied, "x")) == .reset)
    #expect(SyncErrorReaction(SyncError(.badUserAuthentication, "x")) == .reauthenticate)
    #expect(SyncErrorReaction(SyncError(.accessTokenExpired, "x")) == .reauthenticate)
    #expect(SyncErrorReaction(SyncError(.wrongProtocolVersion, "x")) == .stop)
    #expect(SyncErrorReaction(SyncError(.illegalPartitionName, "x")) == .stop)
    #expect(SyncErrorReaction(SyncError(.clientFileBoundInOtherSession, "x")) == .retry)
    // An unknown code follows the action the server sent with it.
    #expect(SyncErrorReaction(SyncError(SyncErrorCode(299), "x")) == .retry)
    #expect(SyncErrorReaction(SyncError(SyncErrorCode(299), "x", action: .clientReset)) == .reset)
    #expect(SyncErrorReaction.concernsConnection(SyncError(.wrongProtocolVersion, "x")))
    #expect(!SyncErrorReaction.concernsConnection(SyncError(.permissionDenied, "x")))
}
