import Foundation

/// Capped exponential backoff with jitter for reconnects (docs/contract.md: Sync errors): the n-th delay is drawn
/// from [(1 - jitter)·d, d] with d = min(maximum, initial·multiplierⁿ), so a fleet that lost
/// its server together does not come back in lockstep. A server's retry-after hint is a floor.
package struct Backoff: Sendable, Hashable {
    package var initial: Duration
    package var maximum: Duration
    package var multiplier: Double
    /// Fraction of the delay that is randomised, 0...1.
    package var jitter: Double
    package private(set) var attempt = 0

    package init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(60), multiplier: Double = 2, jitter: Double = 0.3) {
        precondition(initial > .zero && maximum >= initial && multiplier >= 1 && (0...1).contains(jitter))
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The ceiling of the next delay, before jitter.
    package var nextCeiling: Duration {
        let seconds = min(maximum.seconds, initial.seconds * pow(multiplier, Double(attempt)))
        return .seconds(seconds)
    }

    /// The next delay; `floor` is a server's retry-after hint.
    package mutating func next(floor: Duration = .zero, using random: inout some RandomNumberGenerator) -> Duration {
        let ceiling = nextCeiling.seconds
        attempt = min(attempt + 1, 64)
        let delay = ceiling * (1 - jitter * Double.random(in: 0...1, using: &random))
        return max(.seconds(delay), floor)
    }

    package mutating func next(floor: Duration = .zero) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return next(floor: floor, using: &generator)
    }

    /// After a success: the next failure starts from `initial` again.
    package mutating func reset() { attempt = 0 }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
