import Testing
import TetherTestSupport
import TetherProtocol
@testable import TetherAgent

@Test func delaysGrowExponentiallyWithinJitterAndAreCapped() {
    var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(10), multiplier: 2, jitter: 0.3)
    var random = SeededRandom(seed: 42)
    let ceilings: [Double] = [0.5, 1, 2, 4, 8, 10, 10, 10]
    for ceiling in ceilings {
        let delay = backoff.next(using: &random).seconds
        #expect(delay <= ceiling + 1e-9)
        #expect(delay >= ceiling * 0.7 - 1e-9)
    }
}

@Test func jitterSpreadsAFleet() {
    var random = SeededRandom(seed: 7)
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
