import Foundation
import Synchronization
import TetherControl
import TetherTestSupport

/// One `tetherd` child process with its own state dir, token and control socket.
public final class BenchAgent: Sendable {
    public let name: String
    public let dir: String
    public let configPath: String
    public let socket: String
    private let url: String
    private let settings: Mutex<(partitions: [String], resetMode: String?)>
    private let process = Mutex<ChildProcess?>(nil)

    init(directory: String, name: String, url: String, partitions: [String], resetMode: String?) throws {
        self.name = name
        self.url = url
        dir = directory
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        chmod(dir, 0o755)
        configPath = dir + "/tetherd.toml"
        socket = dir + "/tetherd.sock"
        settings = Mutex((partitions, resetMode))
        try BenchCluster.write(BenchCluster.token + "\n", to: dir + "/token", mode: 0o600)
        try writeConfig()
    }

    private func writeConfig() throws {
        let (partitions, resetMode) = settings.withLock { $0 }
        let reset = resetMode.map { "[reset]\nmode = \"\($0)\"\n" } ?? ""
        try BenchCluster.write("""
            state_dir = "\(dir)/state"
            log_level = "warn"
            control_socket = "\(socket)"
            [server]
            url = "\(url)"
            token_file = "\(dir)/token"
            \(reset)
            \(partitions.map { "[[partition]]\nname = \"\($0)\"" }.joined(separator: "\n"))
            """, to: configPath)
    }

    /// Changes every partition's reset mode and reloads the running daemon (SIGHUP).
    public func reload(resetMode: String) async throws {
        settings.withLock { $0.resetMode = resetMode }
        try writeConfig()
        signal(SIGHUP)
        // The reload is done once the control socket answers with the partitions syncing again.
        try await eventually("tetherd \(name) reloaded", timeout: .seconds(30)) {
            (try? await self.ctl(["status"]))?.status == 0
        }
    }

    public var probe: ProcessProbe? { process.withLock { $0.map { ProcessProbe(processID: $0.processID) } } }
    public var log: String { process.withLock { $0?.standardError ?? "" } }

    /// Starts the daemon and waits until its control socket answers.
    public func start() async throws {
        let (program, arguments) = try BenchCluster.command(
            "tetherd", ["--config", configPath, "--log-destination", "stderr"])
        let child = try ChildProcess.start(program, arguments)
        process.withLock { $0 = child }
        try await eventually("tetherd \(name) answers", timeout: .seconds(120), pollInterval: .milliseconds(5)) {
            if child.hasExited { throw TestSupportError("tetherd \(name) exited: \(child.standardError)") }
            return (try? await ctl(["status"]))?.status == 0
        }
    }

    public func signal(_ number: Int32) { process.withLock { $0 }?.signal(number) }

    public func stop() async {
        let child = process.withLock { $0 }
        child?.signal(SIGTERM)
        _ = await child?.wait(timeout: .seconds(30))
    }

    @discardableResult
    public func ctl(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> ChildProcess.Result {
        try await ChildProcess.run(try BuiltProducts.executable("tetherctl"), ["--socket", socket] + arguments, timeout: timeout)
    }

    public func json(_ arguments: [String]) async throws -> JSONValue {
        let result = try await ctl(arguments + ["--json"])
        guard result.status == 0 else { throw TestSupportError("tetherctl \(arguments) failed: \(result)") }
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.standardOutput.utf8))
    }

    /// `tetherctl wait-synced`: every local change uploaded, the server's latest version integrated.
    public func waitSynced(_ partition: String, timeout: Int = 600) async throws {
        let result = try await ctl(["wait-synced", partition, "--timeout", String(timeout)], timeout: .seconds(timeout + 30))
        guard result.status == 0 else {
            throw TestSupportError("\(name): wait-synced \(partition) failed: \(result)\n\(log.suffix(3000))")
        }
    }

    public func store(_ partition: String) -> String { "\(dir)/state/stores/\(partition).sqlite" }

    /// Every reset the agent recorded, oldest first.
    public func resets() async throws -> [JSONValue] {
        try await json(["resets"])["resets"]?.arrayValue ?? []
    }

    /// Per-partition status objects.
    public func partitions() async throws -> [JSONValue] {
        try await json(["status"])["partitions"]?.arrayValue ?? []
    }
}
