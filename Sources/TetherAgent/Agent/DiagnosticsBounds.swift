import Foundation
import TetherControl
import TetherProtocol

/// Keeps a ``DiagnosticsReport`` within what a remote action may carry
/// (``ProtocolLimits/maxActionReportBytes``), pure: the oldest events are left out until the
/// report fits, and the report says how many and why.
enum DiagnosticsBounds {
    /// The events a report holds at most.
    static let maxEvents = 200

    /// The bytes a report is sent as: the JSON of `value`, keys sorted (what the server stores).
    static func bytes(_ value: JSONValue) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A JSONValue holds only JSON: it always encodes.
        return (try? encoder.encode(value)).map(Array.init) ?? []
    }

    /// `report` as JSON of at most `limit` bytes: its last ``maxEvents`` events, fewer (the
    /// oldest left out) when needed; nil when even without events it is larger.
    static func fitted(_ report: DiagnosticsReport, limit: Int = ProtocolLimits.maxActionReportBytes) -> JSONValue? {
        let all = Array(report.events.suffix(maxEvents))
        let earlierOmitted = report.eventsOmitted
        func value(dropping count: Int) -> (JSONValue, Int)? {
            var trimmed = report
            trimmed.events = Array(all.dropFirst(count))
            trimmed.eventsOmitted = earlierOmitted + count
            if count > 0 {
                trimmed.note = "the \(count) oldest of the last \(all.count) events were left out to keep the report within \(limit) bytes"
            }
            // A report of strings and numbers always encodes.
            guard let json = try? JSONValue(encoding: trimmed) else { return nil }
            return (json, bytes(json).count)
        }
        guard let (whole, size) = value(dropping: 0) else { return nil }
        if size <= limit { return whole }
        // The fewest events dropped for the report to fit: a binary search (size falls as more go).
        guard let (bare, bareSize) = value(dropping: all.count), bareSize <= limit else { return nil }
        var (low, high, best) = (1, all.count, bare)
        while low <= high {
            let middle = (low + high) / 2
            if let (json, size) = value(dropping: middle), size <= limit {
                best = json
                high = middle - 1
            } else {
                low = middle + 1
            }
        }
        return best
    }
}
