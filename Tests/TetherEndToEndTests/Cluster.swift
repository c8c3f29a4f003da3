import Foundation
import Synchronization
import TetherControl
import TetherTestSupport

/// A real `tether-server` on a free loopback port with its own data dir, and `tetherd`
/// agents as child processes, each with its own state dir, token and control socket.
/// Applications are played by the `sqlite3` CLI.
final class Cluster: Sendable {
    static let schema = """
        version = 1
        [tables.orders]
        primary_key = "id"
        [tables.orders.columns]
        id = "text"
        customer = "text"
        total = "real"
        note = "text?"
        """
    static let token = "device-secret"

    let dir: TemporaryDirectory
    let port: UInt16
    /// The device user's token (the server's `device.token` and every agent's `token`).
    let token: String
    private let server = Mutex<ChildProcess?>(nil)
    private let agents = Mutex<[Agent]>([])
    /// Added to the server's environment (fault injection, NOTIFY_SOCKET, WATCHDOG_USEC).
    let serverEnvironment: [String: String]

    /// `serverExtra` goes among the server config's top-level keys; `serverConfig` is appended
    /// to it (a `[storage]` table).
    init(
        clientRecovery: Bool = true, token: String = Cluster.token, serverExtra: String = "",
        serverEnvironment: [String: String] = [:], serverConfig: String = ""
    ) async throws {
        self.token = token
        self.serverEnvironment = serverEnvironment
        dir = try TemporaryDirectory(prefix: "tether-e2e")
        chmod(dir.path, 0o755)
        port = try LoopbackPort.free()
        try Self.write(Self.schema, to: dir.appending("schema.toml"))
        try Self.write("admin-secret\n", to: dir.appending("admin.token"), mode: 0o600)
        try Self.write(token + "\n", to: dir.appending("device.token"), mode: 0o600)
        try Self.write("""
            listen = "127.0.0.1:\(port)"
            data_dir = "\(dir.appending("server-data"))"
            schema = "\(dir.appending("schema.toml"))"
            admin_token_file = "\(dir.appending("admin.token"))"
            client_recovery = \(clientRecovery)
            \(serverExtra)
            [[user]]
            name = "device"
            token_file = "\(dir.appending("device.token"))"
            [[grant]]
            user = "device"
            partitions = ["*"]
            access = "readwrite"
            \(serverConfig)
            """, to: dir.appending("server.toml"))
        try await startServer()
    }

    var url: String { "ws://127.0.0.1:\(port)/sync" }

    /// The running server's process (for its log and signals).
    var serverProcess: ChildProcess? { server.withLock { $0 } }

    func startServer() async throws {
        let process = try ChildProcess.start(
            try BuiltProducts.executable("tether-server"), ["--config", dir.appending("server.toml")],
            environment: ChildProcess.inheritedEnvironment(adding: serverEnvironment))
        server.withLock { $0 = process }
        guard await process.waitForOutput("listening on", timeout: .seconds(30)) else {
            throw TestSupportError("tether-server did not start: \(process.standardError)")
        }
    }

    func signalServer(_ number: Int32) { server.withLock { $0 }?.signal(number) }

    func killServer() async {
        let process = server.withLock { $0 }
        process?.signal(SIGKILL)
        _ = await process?.wait(timeout: .seconds(10))
    }

    /// `tether-server admin …`; its standard output, trimmed.
    @discardableResult
    func admin(_ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run(
            try BuiltProducts.executable("tether-server"),
            ["admin", "--url", "http://127.0.0.1:\(port)", "--token-file", dir.appending("admin.token")] + arguments)
        guard result.status == 0 else { throw TestSupportError("admin \(arguments) failed: \(result)") }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `url`: another server instance than the cluster's own (instances sharing PostgreSQL).
    func agent(_ name: String, partitions: [String], extra: String = "", url: String? = nil) throws -> Agent {
        let agent = try Agent(cluster: self, name: name, partitions: partitions, extra: extra, url: url)
        agents.withLock { $0.append(agent) }
        return agent
    }

    func shutdown() async {
        for agent in agents.withLock({ $0 }) { await agent.stop(SIGKILL) }
        await killServer()
        dir.remove()
    }

    static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
    }
}

/// One `tetherd` child process.
final class Agent: Sendable {
    let name: String
    let dir: String
    let configPath: String
    let socket: String
    private let process = Mutex<ChildProcess?>(nil)

    init(cluster: Cluster, name: String, partitions: [String], extra: String, url: String? = nil) throws {
        self.name = name
        dir = cluster.dir.appending(name)
        try FileManager.default.createDirectory(atPath: dir + "/hooks", withIntermediateDirectories: true)
        chmod(dir, 0o755)
        chmod(dir + "/hooks", 0o755)
        configPath = dir + "/tetherd.toml"
        socket = dir + "/tetherd.sock"
        try Cluster.write(cluster.token + "\n", to: dir + "/token", mode: 0o600)
        try Cluster.write(Self.config(dir: dir, url: url ?? cluster.url, partitions: partitions, extra: extra), to: configPath)
    }

    static func config(dir: String, url: String, partitions: [String], extra: String) -> String {
        """
        state_dir = "\(dir)/state"
        log_level = "debug"
        control_socket = "\(dir)/tetherd.sock"
        \(extra)
        [server]
        url = "\(url)"
        token_file = "\(dir)/token"
        \(partitions.map { "[[partition]]\nname = \"\($0)\"" }.joined(separator: "\n"))
        """
    }

    var processID: Int32? { process.withLock { $0?.processID } }
    /// Whether the daemon (started at least once) has ended.
    var hasExited: Bool { process.withLock { $0?.hasExited ?? false } }
    var log: String { process.withLock { $0?.standardError ?? "" } }

    /// Starts the daemon and waits until its control socket answers.
    func start(environment extra: [String: String] = [:], logDestination: String = "stderr") async throws {
        let child = try ChildProcess.start(
            try BuiltProducts.executable("tetherd"), ["--config", configPath, "--log-destination", logDestination],
            environment: ChildProcess.inheritedEnvironment(adding: extra))
        process.withLock { $0 = child }
        try await eventually("tetherd \(name) answers", timeout: .seconds(30)) {
            if child.hasExited { throw TestSupportError("tetherd \(name) exited: \(child.standardError)") }
            return (try? await ctl(["status"]))?.status == 0
        }
    }

    func signal(_ number: Int32) { process.withLock { $0 }?.signal(number) }

    /// Stops the daemon (SIGTERM, or SIGKILL for a crash) and returns how it ended.
    @discardableResult
    func stop(_ number: Int32 = SIGTERM) async -> ChildProcess.Result? {
        let child = process.withLock { $0 }
        child?.signal(number)
        return await child?.wait(timeout: .seconds(20))
    }

    @discardableResult
    func ctl(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run(try BuiltProducts.executable("tetherctl"), ["--socket", socket] + arguments)
    }

    func json(_ arguments: [String]) async throws -> JSONValue {
        let result = try await ctl(arguments + ["--json"])
        guard result.status == 0 else { throw TestSupportError("tetherctl \(arguments) failed: \(result)") }
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.standardOutput.utf8))
    }

    func waitSynced(_ partition: String, timeout: Int = 30) async throws {
        let result = try await ctl(["wait-synced", partition, "--timeout", String(timeout)])
        guard result.status == 0 else { throw TestSupportError("\(name): wait-synced \(partition) failed: \(result)\n\(log.suffix(3000))") }
    }

    func store(_ partition: String) -> String { "\(dir)/state/stores/\(partition).sqlite" }

    /// Runs SQL with the `sqlite3` CLI, as an application would; returns its output.
    @discardableResult
    func sql(_ partition: String, _ statement: String) async throws -> String {
        let result = try await ChildProcess.run("/usr/bin/sqlite3", ["-cmd", ".timeout 10000", store(partition), statement])
        guard result.status == 0 else { throw TestSupportError("sqlite3 on \(name)/\(partition) failed: \(result)") }
        return result.standardOutput
    }

    func rows(_ partition: String) async throws -> String {
        try await sql(partition, "SELECT id, customer, total, coalesce(note, '-') FROM orders ORDER BY id")
    }

    func status(_ partition: String) async throws -> JSONValue? {
        try await json(["status"])["partitions"]?.arrayValue?.first { $0["name"]?.stringValue == partition }
    }
}

/// Runs `body` with a cluster, always tearing it down (and stopping `agents` it started).
func withCluster(
    clientRecovery: Bool = true, token: String = Cluster.token, serverEnvironment: [String: String] = [:], serverConfig: String = "",
    _ body: (Cluster) async throws -> Void
) async throws {
    let cluster = try await Cluster(
        clientRecovery: clientRecovery, token: token, serverEnvironment: serverEnvironment, serverConfig: serverConfig)
    do {
        try await body(cluster)
    } catch {
        await cluster.shutdown()
        throw error
    }
    await cluster.shutdown()
}
