import Foundation

/// Everything one `tether-bench` run measured: printed as a table and written as JSON.
package struct BenchReport: Sendable, Codable {
    package var date: String
    /// The commit measured (`git rev-parse --short HEAD`, from `make bench`); nil when not given.
    package var commit: String?
    package var machine: String
    package var mode: String
    package var figures: [BenchFigure] = []
    /// Growth with size: per operation, (rows, median seconds), and the fitted exponent.
    package var scaling: [String: [ScalePoint]] = [:]
    package var growthExponents: [String: Double] = [:]
    package var totalSeconds: Double = 0
    package var errors: [String] = []

    package struct ScalePoint: Sendable, Codable {
        package var rows: Int
        package var seconds: Double
        package var floorSeconds: Double?
        package var peakResidentBytes: Int?
    }

    package init(mode: String) {
        let formatter = ISO8601DateFormatter()
        date = formatter.string(from: Date())
        self.mode = mode
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        machine = "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB, Linux \(release)"
    }

    package mutating func add(_ figure: BenchFigure) {
        figures.append(figure)
        progress(Self.line(figure))
    }

    package mutating func addScale(_ operation: String, _ point: ScalePoint) {
        scaling[operation, default: []].append(point)
        growthExponents[operation] = Statistics.growthExponent(scaling[operation]!.map { (size: Double($0.rows), value: $0.seconds) })
    }

    /// The whole table, Markdown.
    package var table: String {
        var text = "| figure | result (median) | runs | floor | ratio | peak RSS | target | met |\n|---|---|---|---|---|---|---|---|\n"
        for figure in figures {
            let runs = figure.runs.map { Self.number($0) }.joined(separator: ", ")
            text += "| \(figure.name) | \(Self.number(figure.value)) \(figure.unit) | \(runs) | "
            text += "\(figure.floorSeconds.map { Self.number($0) + " s" } ?? "—") | \(figure.ratio.map { Self.number($0) + "×" } ?? "—") | "
            text += "\(figure.peakResidentBytes.map(Self.megabytes) ?? "—") | \(figure.target) | "
            text += "\(figure.met.map { $0 ? "yes" : "**no**" } ?? "—") |\n"
        }
        if !scaling.isEmpty {
            text += "\n| operation | rows | seconds | floor s | ratio | peak RSS |\n|---|---|---|---|---|---|\n"
            for (operation, points) in scaling.sorted(by: { $0.key < $1.key }) {
                for point in points {
                    let ratio = point.floorSeconds.flatMap { Statistics.ratio(point.seconds, floor: $0) }
                    text += "| \(operation) | \(point.rows) | \(Self.number(point.seconds)) | "
                    text += "\(point.floorSeconds.map { Self.number($0) } ?? "—") | \(ratio.map { Self.number($0) + "×" } ?? "—") | "
                    text += "\(point.peakResidentBytes.map(Self.megabytes) ?? "—") |\n"
                }
                if let k = growthExponents[operation] { text += "| \(operation): growth exponent (1 = linear) | | \(Self.number(k)) | | | |\n" }
            }
        }
        for error in errors { text += "\nERROR: \(error)\n" }
        let extras = figures.filter { !$0.extra.isEmpty || !$0.notes.isEmpty }
        if !extras.isEmpty {
            text += "\nDetails:\n"
            for figure in extras {
                let values = figure.extra.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.number($0.value))" }
                text += "- \(figure.name): " + (values + figure.notes).joined(separator: "; ") + "\n"
            }
        }
        return text
    }

    package func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }

    static func line(_ figure: BenchFigure) -> String {
        var text = "» \(figure.name): \(number(figure.value)) \(figure.unit)"
        if let ratio = figure.ratio { text += ", \(number(ratio))× floor" }
        if let peak = figure.peakResidentBytes { text += ", peak RSS \(megabytes(peak))" }
        if let met = figure.met { text += met ? " [target met]" : " [target MISSED: \(figure.target)]" }
        return text
    }

    package static func number(_ value: Double) -> String {
        if value == 0 { return "0" }
        let magnitude = abs(value)
        if magnitude >= 1000 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 0.1 { return String(format: "%.2f", value) }
        return String(format: "%.4f", value)
    }

    package static func megabytes(_ bytes: Int) -> String { String(format: "%.0f MB", Double(bytes) / 1_048_576) }
}

/// Prints one line of progress at once, also when standard output is a file or a pipe.
func progress(_ line: String) {
    print(line)
    fflush(nil)
}
