import Foundation
import Synchronization

/// A real `tether-server` (or several instances sharing a PostgreSQL the cluster starts) on
/// free loopback ports with its own data dir, and `tetherd` agents (``ClusterAgent``) as child
/// processes, each with its own state dir, token and control socket; every program from the
/// build next to the running test or `tether-bench`. Applications are played by the `sqlite3`
/// CLI. The end-to-end tests, the fault campaign and `tether-bench` all run on it.
///
/// The server grants the one device user every partition; its admin token is in `admin.token`.
package final class Cluster: Sendable {
    /// The schema every cluster serves: one `orders` table.
    package static let schema = """
        version = 1
        [tables.orders]
        primary_key = "id"
        [tables.orders.columns]
        id = "text"
        customer = "text"
        total = "real"
        note = "text?"
        """

    package let settings: ClusterSettings
    package let dir: TemporaryDirectory
    /// Each server instance's port (the devices' listener, `listen`), the first instance's first.
    package var ports: [UInt16] { portList.withLock { $0.map(\.sync) } }
    /// Each server instance's admin listener port (`admin_listen`: the admin API and console).
    package var adminPorts: [UInt16] { portList.withLock { $0.map(\.admin) } }
    /// Chosen before the instances start (a restart keeps its ports); ones found taken at the
    /// first start are chosen again.
    private let portList: Mutex<[(sync: UInt16, admin: UInt16)]>
    /// The PostgreSQL of ``ClusterSettings/Storage/postgresql`` storage.
    package let postgres: PostgresCluster?
    let servers: Mutex<[ChildProcess?]>
    let agents = Mutex<[ClusterAgent]>([])

    /// Writes the configuration of every instance and starts them in turn.
    package init(_ settings: ClusterSettings = ClusterSettings()) async throws {
        guard settings.instances >= 1, settings.instances == 1 || settings.storage == .postgresql else {
            throw TestSupportError("a cluster of \(settings.instances) instances needs PostgreSQL storage")
        }
        self.settings = settings
        dir = try TemporaryDirectory(prefix: settings.directoryPrefix)
        chmod(dir.path, 0o755)
        portList = Mutex(try (0..<settings.instances).map { _ in try Self.freePorts() })
        servers = Mutex(Array(repeating: nil, count: settings.instances))
        try Self.write(Self.schema, to: dir.appending("schema.toml"))
        try Self.write("admin-secret\n", to: dir.appending("admin.token"), mode: 0o600)
        try Self.write(settings.token + "\n", to: dir.appending("device.token"), mode: 0o600)
        var storageTable = ""
        if settings.storage == .postgresql {
            let postgres = try await PostgresCluster.start()
            self.postgres = postgres
            do {
                storageTable = try await Self.storageTable(postgres, in: dir)
            } catch {
                await postgres.stop()
                throw error
            }
        } else {
            postgres = nil
        }
        do {
            for instance in ports.indices {
                // A free port may be taken (as another connection's source port) before the
                // instance binds it: choose another and start again.
                for attempt in 1...3 {
                    try Self.write(serverConfig(instance, storageTable: storageTable), to: serverConfigPath(instance))
                    do {
                        try await startServer(instance: instance)
                        break
                    } catch let error as TestSupportError where attempt < 3 && "\(error)".contains("Address already in use") {
                        let ports = try Self.freePorts()
                        portList.withLock { $0[instance] = ports }
                    }
                }
            }
        } catch {
            await shutdown()
            throw error
        }
    }

    /// The first instance's port and sync URL (where agents connect unless told otherwise).
    package var port: UInt16 { ports[0] }
    package var url: String { url(instance: 0) }
    package var token: String { settings.token }

    package func url(instance: Int) -> String { "ws://127.0.0.1:\(ports[instance])/sync" }

    /// The admin listener of an instance (the first unless told): the admin API and console.
    package func adminURL(instance: Int = 0) -> String { "http://127.0.0.1:\(adminPorts[instance])" }

    /// Two different free loopback ports: the devices' listener's and the admin listener's.
    private static func freePorts() throws -> (sync: UInt16, admin: UInt16) {
        let sync = try LoopbackPort.free()
        var admin = try LoopbackPort.free()
        while admin == sync { admin = try LoopbackPort.free() }
        return (sync, admin)
    }

    /// `server.toml`, `server-2.toml`, …
    package func serverConfigPath(_ instance: Int = 0) -> String {
        dir.appending("server\(Self.suffix(instance)).toml")
    }

    /// `server-data`, `server-data-2`, …
    package func serverDataDirectory(_ instance: Int = 0) -> String {
        dir.appending("server-data\(Self.suffix(instance))")
    }

    /// A new agent (not started) on `partitions`, its directory named `name`. `url`: another
    /// server than the first instance (another instance, a proxy, a fake server). `extra` goes
    /// among the config's top-level keys (before `[server]`), `server` among `[server]`'s.
    package func agent(_ name: String, partitions: [String], extra: String = "", url: String? = nil, server: String = "") throws -> ClusterAgent {
        let agent = try ClusterAgent(
            directory: dir.appending(name), name: name, token: settings.token, timing: settings.timing,
            config: .init(url: url ?? self.url, partitions: partitions, extra: extra, logLevel: settings.agentLogLevel, server: server))
        agents.withLock { $0.append(agent) }
        return agent
    }

    /// Stops every agent and server with `signal` (SIGKILL: at once; SIGTERM: as an operator
    /// would, waiting for each), stops the PostgreSQL and removes the directory.
    package func shutdown(signal: Int32 = SIGKILL) async {
        for agent in agents.withLock({ $0 }) { await agent.stop(signal) }
        for instance in ports.indices { await stopServer(signal, instance: instance) }
        await postgres?.stop()
        dir.remove()
    }

    /// Writes `text` to `path` with `mode` (tokens: 0600).
    package static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
    }

    /// A hook script named `name` that waits until the file `gate` exists: it holds a reset at
    /// that hook until the test opens the gate (`Cluster.write("", to: gate)`).
    package func gateHook(_ name: String) throws -> (hook: String, gate: String) {
        let gate = dir.appending(name + ".open")
        let hook = dir.appending(name)
        try Self.write("#!/bin/sh\nwhile [ ! -e '\(gate)' ]; do sleep 0.1; done\n", to: hook, mode: 0o755)
        return (hook, gate)
    }

    private func serverConfig(_ instance: Int, storageTable: String) -> String {
        """
        listen = "127.0.0.1:\(ports[instance])"
        admin_listen = "127.0.0.1:\(adminPorts[instance])"
        data_dir = "\(serverDataDirectory(instance))"
        schema = "\(dir.appending("schema.toml"))"
        admin_token_file = "\(dir.appending("admin.token"))"
        client_recovery = \(settings.clientRecovery)
        \(settings.serverExtra)
        [[user]]
        name = "device"
        token_file = "\(dir.appending("device.token"))"
        [[grant]]
        user = "device"
        partitions = ["*"]
        access = "readwrite"
        \(settings.grantExtra)
        \(storageTable)
        \(settings.serverConfig)
        """
    }

    /// A database of `postgres` for the cluster and the `[storage]` table that names it, with
    /// the password in a file of its own (mode 600), as a deployment has it.
    private static func storageTable(_ postgres: PostgresCluster, in dir: TemporaryDirectory) async throws -> String {
        let database = try await postgres.createDatabase()
        try write(postgres.password + "\n", to: dir.appending("pg.password"), mode: 0o600)
        return """
            [storage]
            kind = "postgresql"
            url = "postgresql://\(postgres.user)@127.0.0.1:\(postgres.port)/\(database)?sslmode=disable"
            password_file = "\(dir.appending("pg.password"))"
            """
    }

    private static func suffix(_ instance: Int) -> String { instance == 0 ? "" : "-\(instance + 1)" }
}

/// Runs `body` with a cluster, always tearing it down (with the agents it started), once one
/// of ``ClusterSlots``' slots is free.
package func withCluster(
    _ settings: ClusterSettings = ClusterSettings(), _ body: (Cluster) async throws -> Void
) async throws {
    await ClusterSlots.shared.take()
    do {
        let cluster = try await Cluster(settings)
        do {
            try await body(cluster)
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    } catch {
        await ClusterSlots.shared.give()
        throw error
    }
    await ClusterSlots.shared.give()
}
