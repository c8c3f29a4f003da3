import Testing
@testable import TetherServer

/// The server-drawn charts: a line broken where samples are missing, a title that says what
/// the chart shows, nothing but markup.
@Suite struct ConsoleChartTests {
    static func chart(_ points: [(Int64, Int64)], title: String = "Unsynced changes of p") -> ConsoleChart {
        ConsoleChart(
            id: "c1", title: title, points: points.map { .init(time: $0.0, value: $0.1) }, start: 0, end: 6000, gap: 600, label: { "\($0)" })
    }

    @Test func theLineBreaksWhereASampleIsMissing() {
        let runs = Self.chart([(0, 1), (600, 2), (1200, 4), (3000, 1), (6000, 0)]).runs
        #expect(runs.map(\.count) == [3, 1, 1])
        let first = runs[0]
        #expect(first[0].x == ConsoleChart.left && first[2].y == ConsoleChart.top, "the highest value at the top")
        #expect(runs[2][0].y == ConsoleChart.height - ConsoleChart.bottom, "zero at the bottom")
    }

    @Test func theChartIsInlineSVGWithATitleAndNoScript() {
        let svg = Self.chart([(0, 3), (600, 12)], title: "Unsynced changes of <p>").svg.text
        #expect(svg.hasPrefix("<svg") && svg.contains("role=\"img\"") && svg.contains("aria-labelledby=\"c1\""))
        #expect(svg.contains("<title id=\"c1\">Unsynced changes of &lt;p&gt;: highest 12, latest 12</title>"))
        #expect(svg.contains("<polyline") && !svg.contains("<script") && !svg.contains("style="))
        #expect(Self.chart([]).svg.text.contains("no samples"))
    }
}
