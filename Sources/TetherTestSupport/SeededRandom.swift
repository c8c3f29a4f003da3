/// A small seeded, reproducible random source (SplitMix64) for tests: property tests, fuzzers
/// and the fault campaign print their seed, and the same seed makes the same choices.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with `probability` (0...1).
    package mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    /// One of `choices`, each with its weight.
    package mutating func weighted<T>(_ choices: [(T, Int)]) -> T {
        var pick = Int.random(in: 0..<choices.reduce(0) { $0 + $1.1 }, using: &self)
        for (choice, weight) in choices {
            if pick < weight { return choice }
            pick -= weight
        }
        return choices[choices.count - 1].0
    }
}
