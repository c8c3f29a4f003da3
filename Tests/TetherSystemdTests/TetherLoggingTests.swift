import Foundation
import Testing
import TetherSystemd
import TetherTestSupport

/// `TetherLogging.bootstrap` can run once per process, so these tests bootstrap in a child.
private func runProbeLog(identifier: String, destination: String, environment: [String: String]) async throws
    -> ChildProcess.Result
{
    var base = ChildProcess.inheritedEnvironment()
    for name in ["JOURNAL_STREAM", "INVOCATION_ID", "NOTIFY_SOCKET"] { base[name] = nil }
    return try await ChildProcess.run(
        try BuiltProducts.executable("tether-systemd-probe"), ["log", identifier, destination],
        environment: base.merging(environment) { $1 }, timeout: .seconds(20))
}

@Test func bootstrapByHandWritesPlainLinesToStderr() async throws {
    let identifier = "tether-test-\(UUID().uuidString.prefix(8).lowercased())"
    let result = try await runProbeLog(identifier: identifier, destination: "auto", environment: [:])
    #expect(result.succeeded, "\(result)")
    #expect(result.standardOutput.hasPrefix("destination: stderr ("))
    let lines = result.standardError.split(separator: "\n")
    #expect(lines.count == 7)
    for (line, level) in zip(lines, TetherLogLevel.allCases) {
        #expect(line.contains("Z \(level.rawValue)"), "\(line)")
        #expect(line.hasSuffix("[tether.partition=store-17] probe record at \(level)"), "\(line)")
    }
}

@Suite(.enabled(if: Journald.isAvailable, "needs a running journald, or root to start /lib/systemd/systemd-journald"))
struct TetherLoggingJournalTests {
    @Test func bootstrapUnderSystemdSendsToJournal() async throws {
        try await Journald.ensureRunning()
        let identifier = "tether-test-\(UUID().uuidString.prefix(8).lowercased())"
        let result = try await runProbeLog(
            identifier: identifier, destination: "auto", environment: ["INVOCATION_ID": "0123456789abcdef"])
        #expect(result.succeeded, "\(result)")
        #expect(result.standardOutput.hasPrefix("destination: journal ("))
        #expect(result.standardError.isEmpty)
        let records = try await eventually("7 probe records", timeout: TestDeadline.standard) {
            let found = try await Journald.records(identifier: identifier)
            return found.count >= 7 ? found : nil
        }
        #expect(records.compactMap { $0["PRIORITY"] } == ["2", "3", "4", "6", "6", "7", "7"])
        #expect(records.allSatisfy { $0["TETHER_PARTITION"] == "store-17" && $0["CODE_FILE"] == "tether_systemd_probe/main.swift" })
    }
}
