import Testing
@testable import TetherServer

/// One connection's device reports: ten at once, then one a second (``ReportAllowance``).
@Suite struct ReportAllowanceTests {
    /// How many of `count` reports arriving at `at` are kept.
    static func kept(_ count: Int, of allowance: inout ReportAllowance, at: ContinuousClock.Instant) -> Int {
        (0..<count).reduce(0) { total, _ in total + (allowance.allow(at: at) ? 1 : 0) }
    }

    @Test func tenAtOnceThenOneASecond() {
        var allowance = ReportAllowance()
        let start = ContinuousClock.now
        let burst = Self.kept(11, of: &allowance, at: start)
        let halfSecond = Self.kept(1, of: &allowance, at: start + .milliseconds(500))
        #expect(burst == 10 && halfSecond == 0)
        #expect(allowance.dropped == 2)
        let aSecond = Self.kept(1, of: &allowance, at: start + .milliseconds(1000))
        #expect(aSecond == 1 && allowance.dropped == 0)
        let soonAfter = Self.kept(1, of: &allowance, at: start + .milliseconds(1100))
        #expect(soonAfter == 0)
        // A quiet minute refills the bucket, never beyond ten.
        let later = Self.kept(20, of: &allowance, at: start + .seconds(60))
        #expect(later == 10)
    }
}
