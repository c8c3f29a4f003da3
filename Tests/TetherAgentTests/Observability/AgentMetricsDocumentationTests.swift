import Foundation
import Testing
import TetherProtocol
import TetherSystemd
@testable import TetherAgent

/// The agent's metrics and their table in docs/operations.md agree, and every family carries
/// its `# HELP` and `# TYPE`.
@Suite struct AgentMetricsDocumentationTests {
    /// The families of an exposition (`# TYPE` lines) and those with a `# HELP` line.
    static func families(_ text: String) -> (typed: Set<String>, helped: Set<String>) {
        var typed: Set<String> = []
        var helped: Set<String> = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 3)
            guard words.count >= 3, words[0] == "#" else { continue }
            if words[1] == "TYPE" { typed.insert(String(words[2])) }
            if words[1] == "HELP", words.count == 4, !words[3].isEmpty { helped.insert(String(words[2])) }
        }
        return (typed, helped)
    }

    @Test func agentMetricsAreDocumentedWithHelpAndType() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let documented = Set(docs.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("| `tether_") || line.hasPrefix("| `process_") ? line.split(separator: "`")[1].description : nil
        })
        let process = try #require(ProcessStatistics.current())
        let text = AgentMetrics().exposition(.init(
            statuses: [PartitionStatus(name: PartitionName("p")!, state: .synced)], resets: [], now: Date(), process: process))
        let (exposed, helped) = Self.families(text)
        #expect(exposed == documented, "exposed only: \(exposed.subtracting(documented)); documented only: \(documented.subtracting(exposed))")
        #expect(exposed == helped, "without # HELP: \(exposed.subtracting(helped))")
        #expect(text.contains("tether_build_info{program=\"tetherd\",release=\"\(TetherVersion.release)\""))
        #expect(process.residentMemoryBytes > 0 && process.openFileDescriptors > 0 && process.startTimeSeconds > 1_700_000_000)
    }
}
