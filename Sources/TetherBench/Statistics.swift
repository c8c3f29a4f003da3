import Foundation

/// The summary statistics the benchmark reports: medians of runs, percentiles of latency
/// samples and ratios against a floor measured in the same run.
package enum Statistics {
    /// The median of `values` (the mean of the two middle values for an even count); nil when empty.
    package static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The `p`-th percentile (0…100) of `values` by the nearest-rank method: the smallest value
    /// such that at least p % of the values are at or below it. Nil when empty.
    package static func percentile(_ p: Double, of values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// `measured / floor`, or nil when the floor is not positive.
    package static func ratio(_ measured: Double, floor: Double) -> Double? {
        floor > 0 ? measured / floor : nil
    }

    /// How a figure grows with size: the exponent `k` of `time ∝ size^k` fitted by least squares
    /// on logarithms (1 is linear). Nil with fewer than two distinct positive points.
    package static func growthExponent(_ points: [(size: Double, value: Double)]) -> Double? {
        let logs = points.filter { $0.size > 0 && $0.value > 0 }.map { (x: log($0.size), y: log($0.value)) }
        guard logs.count >= 2 else { return nil }
        let meanX = logs.map(\.x).reduce(0, +) / Double(logs.count)
        let meanY = logs.map(\.y).reduce(0, +) / Double(logs.count)
        let sxx = logs.map { ($0.x - meanX) * ($0.x - meanX) }.reduce(0, +)
        guard sxx > 0 else { return nil }
        let sxy = logs.map { ($0.x - meanX) * ($0.y - meanY) }.reduce(0, +)
        return sxy / sxx
    }
}
