import Foundation
import Glibc
import Testing
import TetherControl
import TetherTestSupport

/// The Python package (`python/tether_client`) against real processes: this test starts the
/// server and two agents (`b`, the application's, with manual resets the tests initiate) and
/// runs `python/tests` with pytest from the venv `scripts/python-venv` makes (`make test` runs
/// it first), telling the tests where everything is. The package and its tests are also
/// checked with `mypy --strict`.
@Suite(.timeLimit(.minutes(6)))
struct PythonClientEndToEndTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func thePythonPackagePassesItsTestsAgainstRealProcesses() async throws {
        let python = Self.root.appendingPathComponent(".build/python-venv/bin/python").path
        // Never skipped: without the venv this fails and says how to make it.
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run scripts/python-venv (make test does)")
        try await withCluster { cluster in
            chmod(cluster.dir.path, 0o755)  // the reader's test connects as another uid
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], extra: "[reset]\nmode = \"manual\"")
            for agent in [a, b] { try await agent.start() }
            for agent in [a, b] { try await agent.waitSynced("p") }
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
                python, [
                    // A test that outlives 100 s prints every thread's stack (what it waits for).
                    "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "faulthandler_timeout=100",
                    Self.root.appendingPathComponent("python/tests").path,
                ],
                environment: ChildProcess.inheritedEnvironment(adding: environment), timeout: .seconds(300))
            #expect(result.status == 0, "pytest:\n\(result.standardOutput)\n\(result.standardError)\nb:\n\(b.log.suffix(4000))")
            #expect(result.standardOutput.contains("13 passed"), "\(result.standardOutput)")
        }
    }

    @Test func thePythonPackageIsMypyStrictClean() async throws {
        let python = Self.root.appendingPathComponent(".build/python-venv/bin/python").path
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run scripts/python-venv (make test does)")
        let cache = try TemporaryDirectory(prefix: "mypy")
        defer { cache.remove() }
        let result = try await ChildProcess.run(
            python,
            ["-m", "mypy", "--strict", "--cache-dir", cache.path, Self.root.appendingPathComponent("python/tether_client").path,
             Self.root.appendingPathComponent("python/tests").path],
            timeout: .seconds(300))
        #expect(result.status == 0 && result.standardOutput.contains("Success"), "mypy --strict:\n\(result.standardOutput)\n\(result.standardError)")
    }

    static func json(_ strings: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(strings), as: UTF8.self)
    }
}
