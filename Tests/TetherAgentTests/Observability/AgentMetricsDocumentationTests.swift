import Foundation
import Testing
import TetherAgent
import TetherProtocol

/// Every metric the agent exposes is in the table of docs/operations.md, and nothing more.
@Suite struct AgentMetricsDocumentationTests {
    @Test func agentMetricsAreDocumented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let documented = Set(docs.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("| `tether_agent_") ? line.split(separator: "`")[1].description : nil
        })
        let text = AgentMetrics().exposition(.init(statuses: [PartitionStatus(name: PartitionName("p")!, state: .synced)], resets: [], now: Date()))
        let exposed = Set(text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("# TYPE ") else { return nil }
            return line.split(separator: " ")[2].description
        })
        #expect(exposed == documented, "exposed only: \(exposed.subtracting(documented)); documented only: \(documented.subtracting(exposed))")
    }
}
