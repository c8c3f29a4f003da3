import Foundation
import Testing
import TetherBench
import TetherTestSupport

/// ``BenchHistory``: runs kept by date and commit, each figure compared with the last earlier
/// run of it in the same mode, a file that is not a report skipped.
@Suite struct BenchHistoryTests {
    static func report(_ date: String, commit: String?, mode: String = "full", _ figures: [(String, Double, Double?)]) -> BenchReport {
        var report = BenchReport(mode: mode)
        report.date = date
        report.commit = commit
        report.figures = figures.map { name, value, floor in
            BenchFigure(name: name, workload: "w", value: value, unit: "s", runs: [value], seconds: value, floorSeconds: floor)
        }
        return report
    }

    @Test func fileNamesSortByDateAndCarryACleanCommit() {
        #expect(BenchHistory.fileName(date: "2026-11-29T16:04:27Z", commit: "f6bfd8f") == "20261129T160427Z-f6bfd8f.json")
        #expect(BenchHistory.fileName(date: "2026-11-29T16:04:27Z", commit: "../x y") == "20261129T160427Z-xy.json")
        #expect(BenchHistory.fileName(date: "2026-11-29T16:04:27Z", commit: "") == "20261129T160427Z-unknown.json")
    }

    @Test func eachFigureIsComparedWithTheLastRunThatMeasuredItInTheSameMode() {
        let older = Self.report("2026-11-01T00:00:00Z", commit: "aaa", [("bulk", 2.0, 1.0), ("bootstrap", 4.0, nil)])
        let quick = Self.report("2026-11-02T00:00:00Z", commit: "bbb", mode: "quick", [("bulk", 0.1, 0.1)])
        let newer = Self.report("2026-11-03T00:00:00Z", commit: "ccc", [("bulk", 1.5, 1.0)])
        let now = Self.report("2026-11-04T00:00:00Z", commit: "ddd", [("bulk", 1.8, 1.2), ("bootstrap", 3.0, nil), ("ledger", 0.1, nil)])
        let lines = BenchHistory.changes(of: now, against: [older, quick, newer])
        #expect(lines.count == 3)
        #expect(lines[0] == "bulk: 1.50 → 1.80 s (+20.0 %), ratio to floor 1.50× → 1.50× (+0.0 %) since 2026-11-03T00:00:00Z (ccc)")
        #expect(lines[1] == "bootstrap: 4.00 → 3.00 s (-25.0 %) since 2026-11-01T00:00:00Z (aaa)")
        #expect(lines[2] == "ledger: first run in this mode")
    }

    @Test func runsAreKeptAndReadBackOldestFirstSkippingOtherFiles() throws {
        let dir = try TemporaryDirectory(prefix: "tether-bench-history")
        defer { dir.remove() }
        let history = BenchHistory(directory: dir.path + "/history")
        #expect(history.previousRuns().isEmpty, "no directory yet")
        try history.record(Self.report("2026-11-03T00:00:00Z", commit: "ccc", [("bulk", 1.5, 1.0)]))
        try history.record(Self.report("2026-11-01T00:00:00Z", commit: "aaa", [("bulk", 2.0, 1.0)]))
        _ = try dir.write("history/notes.json", "not a report")
        let runs = history.previousRuns()
        #expect(runs.map(\.commit) == ["aaa", "ccc"])
        #expect(runs.last?.figures.first?.ratio == 1.5)
    }
}
