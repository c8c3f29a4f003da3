import Foundation

/// A small chart drawn on the server as inline SVG (no script, no asset, no `style`
/// attribute: the console's policy allows it as it is): one line over a time window, broken
/// where a sample is missing, with its highest value, the window's ends, a `<title>` for
/// screen readers, and the samples as a table beside it (the text alternative).
struct ConsoleChart: Sendable {
    struct Point: Sendable, Hashable {
        /// Seconds since 1970.
        var time: Int64
        var value: Int64
    }

    /// Unique on its page: the id of the chart's title.
    var id: String
    var title: String
    var points: [Point]
    var start: Int64
    var end: Int64
    /// Samples further apart than this are not joined by the line.
    var gap: Int64
    /// How a value reads (`3 min`, `12`).
    var label: @Sendable (Int64) -> String

    static let width = 600
    static let height = 120
    static let left = 56
    static let top = 8
    static let bottom = 22

    /// The points of the line, in the drawing's coordinates, one list per unbroken run.
    var runs: [[(x: Int, y: Int)]] {
        let span = max(1, end - start)
        let high = max(1, points.map(\.value).max() ?? 1)
        let plotWidth = Self.width - Self.left - 4
        let plotHeight = Self.height - Self.top - Self.bottom
        var runs: [[(x: Int, y: Int)]] = []
        var previous: Int64? = nil
        for p in points.sorted(by: { $0.time < $1.time }) where p.time >= start && p.time <= end {
            let x = Self.left + Int((Double(p.time - start) / Double(span) * Double(plotWidth)).rounded())
            let y = Self.top + plotHeight - Int((Double(max(0, p.value)) / Double(high) * Double(plotHeight)).rounded())
            if let previous, p.time - previous <= gap { runs[runs.count - 1].append((x, y)) } else { runs.append([(x, y)]) }
            previous = p.time
        }
        return runs
    }

    var svg: HTML {
        let high = max(0, points.map(\.value).max() ?? 0)
        let latest = points.max(by: { $0.time < $1.time })
        let summary = points.isEmpty ? "\(title): no samples" : "\(title): highest \(label(high)), latest \(label(latest?.value ?? 0))"
        let bottomY = Self.height - Self.bottom
        let lines = runs.map { run -> HTML in
            run.count == 1
                ? "<circle cx=\"\(run[0].x)\" cy=\"\(run[0].y)\" r=\"2\" fill=\"#0b5cad\"/>"
                : "<polyline fill=\"none\" stroke=\"#0b5cad\" stroke-width=\"2\" points=\"\(run.map { "\($0.x),\($0.y)" }.joined(separator: " "))\"/>"
        }
        return """
            <svg class="chart" viewBox="0 0 \(Self.width) \(Self.height)" width="\(Self.width)" height="\(Self.height)" role="img" aria-labelledby="\(id)">
            <title id="\(id)">\(summary)</title>
            <rect x="\(Self.left)" y="\(Self.top)" width="\(Self.width - Self.left - 4)" height="\(bottomY - Self.top)" fill="#f7f9fb" stroke="#c8ced6"/>
            <text x="\(Self.left - 6)" y="\(Self.top + 10)" text-anchor="end" font-size="11" fill="#4a535e">\(label(high))</text>
            <text x="\(Self.left - 6)" y="\(bottomY)" text-anchor="end" font-size="11" fill="#4a535e">0</text>
            <text x="\(Self.left)" y="\(Self.height - 6)" font-size="11" fill="#4a535e">\(AgeText.words(seconds: end - start))</text>
            <text x="\(Self.width - 4)" y="\(Self.height - 6)" text-anchor="end" font-size="11" fill="#4a535e">now</text>
            \(lines)
            </svg>
            """
    }
}
