import Testing
import TetherBench

@Suite struct StatisticsTests {
    @Test func medianOfOddAndEvenCounts() {
        #expect(Statistics.median([]) == nil)
        #expect(Statistics.median([3, 1, 2]) == 2)
        #expect(Statistics.median([4, 1, 3, 2]) == 2.5)
    }

    @Test func percentilesByNearestRank() {
        let values = (1...100).map(Double.init)
        #expect(Statistics.percentile(50, of: values) == 50)
        #expect(Statistics.percentile(99, of: values) == 99)
        #expect(Statistics.percentile(100, of: values) == 100)
        #expect(Statistics.percentile(0, of: values) == 1)
        #expect(Statistics.percentile(99, of: [5]) == 5)
        #expect(Statistics.percentile(50, of: []) == nil)
    }

    @Test func ratioAgainstAFloor() {
        #expect(Statistics.ratio(3, floor: 1.5) == 2)
        #expect(Statistics.ratio(3, floor: 0) == nil)
    }

    @Test func growthExponentIsOneForLinearAndTwoForQuadratic() throws {
        let linear = try #require(Statistics.growthExponent([(10_000, 0.5), (100_000, 5), (1_000_000, 50)]))
        #expect(abs(linear - 1) < 1e-9)
        let quadratic = try #require(Statistics.growthExponent([(10, 1), (100, 100)]))
        #expect(abs(quadratic - 2) < 1e-9)
        #expect(Statistics.growthExponent([(10, 1)]) == nil)
    }
}
