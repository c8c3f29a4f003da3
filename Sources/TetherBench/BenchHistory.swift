import Foundation

/// Every `make bench` run kept in `bench/history/` (in git: the repository carries its own
/// record), one JSON file per run named by its date and commit, and each figure compared with
/// the last earlier run that measured it in the same mode (`full`, `quick`, the storage): the
/// change in its value and in its ratio to its floor, which is what survives a busier machine.
package struct BenchHistory: Sendable {
    package var directory: String

    package init(directory: String) {
        self.directory = directory
    }

    /// The file a run is kept in: `<UTC date and time>-<commit>.json`, which sorts by date.
    package static func fileName(date: String, commit: String) -> String {
        let stamp = date.filter { $0.isNumber || $0 == "T" || $0 == "Z" }
        let safeCommit = commit.filter { $0.isLetter || $0.isNumber }.prefix(40)
        return "\(stamp)-\(safeCommit.isEmpty ? "unknown" : String(safeCommit)).json"
    }

    /// The earlier runs, oldest first; a file that is not a report is skipped.
    package func previousRuns() -> [BenchReport] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { return nil }
            return try? JSONDecoder().decode(BenchReport.self, from: data)
        }
    }

    /// Keeps `report` (which names its commit) and returns the path written.
    @discardableResult
    package func record(_ report: BenchReport) throws -> String {
        let path = directory + "/" + Self.fileName(date: report.date, commit: report.commit ?? "unknown")
        try report.write(to: path)
        return path
    }

    /// One line per figure of `report`: its change against the last of `previous` (oldest
    /// first) that measured the same figure in the same mode, or that it is new.
    package static func changes(of report: BenchReport, against previous: [BenchReport]) -> [String] {
        report.figures.map { figure in
            let earlier = previous.last { run in run.mode == report.mode && run.figures.contains { $0.name == figure.name } }
            guard let earlier, let before = earlier.figures.last(where: { $0.name == figure.name }) else {
                return "\(figure.name): first run in this mode"
            }
            var line = "\(figure.name): \(BenchReport.number(before.value)) → \(BenchReport.number(figure.value)) \(figure.unit)"
            line += " (\(percent(from: before.value, to: figure.value)))"
            if let was = before.ratio, let now = figure.ratio {
                line += ", ratio to floor \(BenchReport.number(was))× → \(BenchReport.number(now))× (\(percent(from: was, to: now)))"
            }
            return line + " since \(earlier.date) (\(earlier.commit ?? "commit unknown"))"
        }
    }

    static func percent(from before: Double, to after: Double) -> String {
        guard before != 0 else { return after == 0 ? "±0 %" : "was 0" }
        let change = (after - before) / abs(before) * 100
        return change >= 0 ? String(format: "+%.1f %%", change) : String(format: "%.1f %%", change)
    }
}
