import Foundation
import Testing
import TetherTestSupport

/// The web console in a real browser (issue 37; its enrollment pages, issue 48): this test starts
/// the server (SQLite, with a partition the agent will bind) and prepares an agent, then runs `Tests/Browser` with pytest
/// and Playwright from the venv `scripts/python-venv` makes, driving Debian's headless
/// Chromium. The screenshots of every page land in `.build/console-screenshots/`.
@Suite(.timeLimit(.minutes(6)))
struct ConsoleBrowserEndToEndTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theConsolePassesItsBrowserTests() async throws {
        let python = Self.root.appendingPathComponent(".build/python-venv/bin/python").path
        // Never skipped: without the venv or the browser this fails and says how to get them.
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run scripts/python-venv (make test does)")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "no /usr/bin/chromium: run scripts/python-venv (make test does)")
        let screenshots = Self.root.appendingPathComponent(".build/console-screenshots").path
        try? FileManager.default.removeItem(atPath: screenshots)
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        try await withCluster { cluster in
            let agent = try cluster.agent(
                "a", partitions: ["p"], extra: "[device]\nname = \"till-7 (shop 3)\"\nreport_interval_seconds = 1")
            let environment: [String: String] = [
                "TETHER_CONSOLE_URL": cluster.adminURL(), "TETHER_ADMIN_TOKEN_FILE": cluster.dir.appending("admin.token"),
                "TETHER_SCREENSHOTS": screenshots, "TETHER_DEVICES_URL": "http://127.0.0.1:\(cluster.port)",
                "TETHER_AGENT_ARGV": try Self.json([try BuiltProducts.executable("tetherd"), "--config", agent.configPath, "--log-destination", "stderr"]),
                "TETHER_AGENT_STORE": agent.store("p"), "TETHER_AGENT_SOCKET": agent.socket,
                "TETHER_TETHERCTL": try BuiltProducts.executable("tetherctl"),
                "TETHER_SERVER_DB": cluster.serverDataDirectory() + "/server.sqlite",
            ]
            let result = try await ChildProcess.run(
                python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", Self.root.appendingPathComponent("Tests/Browser").path],
                environment: ChildProcess.inheritedEnvironment(adding: environment), timeout: .seconds(300))
            #expect(result.status == 0, "pytest:\n\(result.standardOutput)\n\(result.standardError)")
            #expect(result.standardOutput.contains("15 passed"), "\(result.standardOutput)")
            for page in [
                "sign-in", "partitions-empty", "devices", "device", "snapshot-done", "partition", "refused",
                "enroll-key-created", "enrollment", "device-enrolled", "device-revoked", "fleet-devices", "fleet-stalest", "fleet-device-history",
            ] {
                #expect(FileManager.default.fileExists(atPath: screenshots + "/\(page).png"), "no screenshot of \(page)")
            }
        }
    }

    static func json(_ strings: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(strings), as: UTF8.self)
    }
}
