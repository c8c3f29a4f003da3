import Foundation
import Testing
@testable import TetherServer
import TetherProtocol

/// The server's metrics, their table in docs/server.md and the names contrib/'s dashboard and
/// alert rules use agree.
@Suite struct MetricsDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Metric names (`tether_server_…` or `tether_agent_…`) in `text`, without histogram suffixes.
    static func names(_ prefix: String, in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "\(prefix)[a-z_]*[a-z]")
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).map { match -> String in
            var name = String(text[Range(match.range, in: text)!])
            for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix("_seconds" + suffix) { name.removeLast(suffix.count) }
            return name
        })
    }

    /// Names in the first column of docs tables (`| \`name\` |`).
    static func documented(_ prefix: String, in text: String) -> Set<String> {
        Set(text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `\(prefix)") else { return nil }
            return line.split(separator: "`")[1].description
        })
    }

    /// Every family the server exposes has its `# HELP` and `# TYPE`, the build's and the
    /// process' ones included.
    @Test func everyServerFamilyHasHelpAndType() {
        let metrics = ServerMetrics()
        metrics.syncError(SyncErrorCode(211))
        let text = metrics.exposition(.init(
            connectedDevices: 1, boundSessions: 1, syncEnabled: true, partitionVersions: ["p": 1], stateDownloads: (1, 0),
            devices: DeviceCounts(byState: ["synced": 1])))
        var typed: Set<String> = []
        var helped: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("# ") {
            let words = line.split(separator: " ", maxSplits: 3)
            guard words.count == 4 else { continue }
            if words[1] == "TYPE" { typed.insert(String(words[2])) }
            if words[1] == "HELP" { helped.insert(String(words[2])) }
        }
        #expect(typed == helped, "without # HELP: \(typed.subtracting(helped))")
        for name in ["tether_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "tether_server_heals_detected_total"] {
            #expect(typed.contains(name), "\(name)")
        }
        #expect(text.contains("tether_build_info{program=\"tether-server\",release=\"\(TetherVersion.release)\",sync_protocol=\"\(TetherVersion.syncProtocol)\"} 1"))
    }

    @Test func serverMetricsAreDocumentedAndContribUsesOnlyThem() throws {
        let metrics = ServerMetrics()
        metrics.integrated(changes: 1, duration: .milliseconds(1))
        metrics.syncError(SyncErrorCode(211))
        let exposed = Self.names("tether_server_", in: metrics.exposition(.init(
            connectedDevices: 1, boundSessions: 1, syncEnabled: true, partitionVersions: ["p": 1], stateDownloads: (1, 0),
            devices: DeviceCounts(byState: ["synced": 1]))))
        let documented = Self.documented("tether_server_", in: try Self.read("docs/server.md"))
        #expect(exposed == documented, "exposed but not documented: \(exposed.subtracting(documented)); documented but not exposed: \(documented.subtracting(exposed))")
        // Beside its own families: the build's and the process', documented too.
        let others = Self.documented("tether_build", in: try Self.read("docs/server.md")).union(
            Self.documented("process_", in: try Self.read("docs/server.md")))
        #expect(others.count == 7, "\(others)")
        let agentDocumented = Self.documented("tether_agent_", in: try Self.read("docs/operations.md"))
        #expect(agentDocumented.count >= 10)
        for file in ["contrib/grafana-tether.json", "contrib/prometheus-tether-alerts.yml"] {
            let text = try Self.read(file)
            let used = Self.names("tether_server_", in: text).union(Self.names("tether_agent_", in: text))
            #expect(!used.isEmpty)
            #expect(used.subtracting(documented).subtracting(agentDocumented).isEmpty, "\(file) uses unknown metrics: \(used.subtracting(documented).subtracting(agentDocumented))")
        }
    }
}
