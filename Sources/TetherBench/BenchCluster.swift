import Foundation
import Synchronization
import TetherTestSupport

/// A real `tether-server` on a free loopback port with its own data dir, and `tetherd` agents
/// (``BenchAgent``) as child processes, all from the release build next to `tether-bench`.
/// Every agent uses the one device user; the server grants it every partition.
public final class BenchCluster: Sendable {
    public static let schema = """
        version = 1
        [tables.orders]
        primary_key = "id"
        [tables.orders.columns]
        id = "text"
        customer = "text"
        total = "real"
        note = "text?"
        """
    public static let token = "bench-device-secret"

    public let dir: TemporaryDirectory
    public let port: UInt16
    /// The second instance's port (the first's when there is one instance).
    public let readerPort: UInt16
    private let servers = Mutex<[ChildProcess]>([])
    private let agents = Mutex<[BenchAgent]>([])
    private let postgres: PostgresCluster?

    /// A server on SQLite (the default), or `instances` servers sharing a database of a
    /// PostgreSQL the bench starts itself (`initdb` into its directory, loopback, a free port).
    public init(storage: BenchOptions.Storage = .sqlite, instances: Int = 1) async throws {
        dir = try TemporaryDirectory(prefix: "tether-bench")
        chmod(dir.path, 0o755)
        port = try LoopbackPort.free()
        readerPort = instances > 1 ? try LoopbackPort.free() : port
        try Self.write(Self.schema, to: dir.appending("schema.toml"))
        try Self.write("bench-admin-secret\n", to: dir.appending("admin.token"), mode: 0o600)
        try Self.write(Self.token + "\n", to: dir.appending("device.token"), mode: 0o600)
        var storageTable = ""
        if storage == .postgresql {
            let cluster = try await PostgresCluster.start()
            postgres = cluster
            let database = try await cluster.createDatabase("tether_bench")
            try Self.write(cluster.password + "\n", to: dir.appending("pg.password"), mode: 0o600)
            storageTable = """
                [storage]
                kind = "postgresql"
                url = "postgresql://\(cluster.user)@127.0.0.1:\(cluster.port)/\(database)?sslmode=disable"
                password_file = "\(dir.appending("pg.password"))"
                """
        } else {
            postgres = nil
        }
        let ports: [UInt16] = instances > 1 ? [port, readerPort] : [port]
        for index in ports.indices {
            let instancePort = ports[index]
            let suffix = index == 0 ? "" : "-\(index + 1)"
            try Self.write("""
                listen = "127.0.0.1:\(instancePort)"
                data_dir = "\(dir.appending("server-data" + suffix))"
                schema = "\(dir.appending("schema.toml"))"
                admin_token_file = "\(dir.appending("admin.token"))"
                log_level = "info"
                [[user]]
                name = "device"
                token_file = "\(dir.appending("device.token"))"
                [[grant]]
                user = "device"
                partitions = ["*"]
                access = "readwrite"
                \(storageTable)
                """, to: dir.appending("server\(suffix).toml"))
            let (program, arguments) = try Self.command("tether-server", ["--config", dir.appending("server\(suffix).toml")])
            let process = try ChildProcess.start(program, arguments)
            servers.withLock { $0.append(process) }
            guard await process.waitForOutput("listening on", timeout: .seconds(120)) else {
                process.signal(SIGKILL)
                throw TestSupportError("tether-server did not start: \(process.standardError)")
            }
        }
    }

    public var url: String { "ws://127.0.0.1:\(port)/sync" }
    public var serverDatabase: String { dir.appending("server-data/server.sqlite") }
    public var serverProbe: ProcessProbe? { servers.withLock { $0.first.map { ProcessProbe(processID: $0.processID) } } }
    /// Where readers (agent B, the fan-out sessions) connect: the second instance when there are two.
    public var readerURL: String { "ws://127.0.0.1:\(readerPort)/sync" }
    public var readerServerProbe: ProcessProbe? { servers.withLock { $0.last.map { ProcessProbe(processID: $0.processID) } } }

    /// `tether-server admin …`; its standard output, trimmed.
    @discardableResult
    public func admin(_ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run(
            try BuiltProducts.executable("tether-server"),
            ["admin", "--url", "http://127.0.0.1:\(port)", "--token-file", dir.appending("admin.token")] + arguments,
            timeout: .seconds(300))
        guard result.status == 0 else { throw TestSupportError("admin \(arguments) failed: \(result)") }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new agent (not started) with `partitions`; `url` overrides the server URL (a proxy).
    public func agent(_ name: String, partitions: [String], url: String? = nil, resetMode: String? = nil) throws -> BenchAgent {
        let agent = try BenchAgent(
            directory: dir.appending(name), name: name, url: url ?? self.url, partitions: partitions, resetMode: resetMode)
        agents.withLock { $0.append(agent) }
        return agent
    }

    public func shutdown() async {
        for agent in agents.withLock({ $0 }) { await agent.stop() }
        for process in servers.withLock({ $0 }) {
            process.signal(SIGTERM)
            _ = await process.wait(timeout: .seconds(20))
        }
        await postgres?.stop()
        dir.remove()
    }

    /// The path of a release-built program next to `tether-bench`.
    static func command(_ program: String, _ arguments: [String]) throws -> (String, [String]) {
        (try BuiltProducts.executable(program), arguments)
    }

    static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
    }
}
