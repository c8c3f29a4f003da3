import Foundation
import Glibc
import Testing
import TetherControl
import TetherTestSupport

/// The Python package (`python/tether_client`) against real processes: this test starts the
/// server and two agents and runs `python/tests` with pytest from the venv `scripts/python-venv`
/// makes (`make test` runs it first), telling the tests where everything is.
@Suite(.timeLimit(.minutes(6)))
struct PythonClientEndToEndTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func thePythonPackagePassesItsTestsAgainstRealProcesses() async throws {
        let python = Self.root.appendingPathComponent(".build/python-venv/bin/python").path
        // Never skipped: without the venv this fails and says how to make it.
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run scripts/python-venv (make test does)")
        try await withCluster { cluster in
            chmod(cluster.dir.path, 0o755)  // the reader's test connects as another uid
            let agents = try await cluster.syncedAgents(["a", "b"])
            let (a, b) = (agents[0], agents[1])
            let pid = try #require(b.processID)
            let server = try BuiltProducts.executable("tether-server")
            let admin = [server, "admin", "--url", cluster.adminURL(), "--token-file", cluster.dir.appending("admin.token")]
            let agentArgv = [try BuiltProducts.executable("tetherd"), "--config", b.configPath, "--log-destination", "stderr"]
            let environment: [String: String] = [
                "TETHER_TEST_SOCKET": b.socket, "TETHER_TEST_STORE": b.store("p"), "TETHER_TEST_AGENT_PID": String(pid),
                "TETHER_TEST_AGENT_ARGV": try Self.json(agentArgv), "TETHER_TEST_OTHER_SOCKET": a.socket,
                "TETHER_TEST_OTHER_STORE": a.store("p"), "TETHER_TEST_ADMIN": try Self.json(admin),
                "TETHER_TEST_TETHERCTL": try BuiltProducts.executable("tetherctl"), "TETHER_TEST_READER": "49101:0",
            ]
            let result = try await ChildProcess.run(
                python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", Self.root.appendingPathComponent("python/tests").path],
                environment: ChildProcess.inheritedEnvironment(adding: environment), timeout: .seconds(300))
            #expect(result.status == 0, "pytest:\n\(result.standardOutput)\n\(result.standardError)\nb:\n\(b.log.suffix(4000))")
            #expect(result.standardOutput.contains("5 passed"), "\(result.standardOutput)")
        }
    }

    static func json(_ strings: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(strings), as: UTF8.self)
    }
}
