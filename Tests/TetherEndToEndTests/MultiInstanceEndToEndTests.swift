import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Two `tether-server` instances sharing a real PostgreSQL (started by the test), real
/// `tetherd` agents on different instances, applications played by `sqlite3`.
@Suite struct MultiInstanceEndToEndTests {
    @Test func agentsOnTwoInstancesConvergeAndARestoreOnOneResetsAgentsOnTheOther() async throws {
        let postgres = try await PostgresCluster.start()
        do {
            try await run(postgres)
        } catch {
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }

    private func run(_ postgres: PostgresCluster) async throws {
        let database = try await postgres.createDatabase()
        let passwordDir = try TemporaryDirectory(prefix: "tether-e2e-pg")
        let passwordFile = passwordDir.appending("pg.password")
        try Cluster.write(postgres.password + "\n", to: passwordFile, mode: 0o600)
        let storage = """
            [storage]
            kind = "postgresql"
            url = "postgresql://\(postgres.user)@127.0.0.1:\(postgres.port)/\(database)?sslmode=disable"
            password_file = "\(passwordFile)"
            """
        try await withCluster(serverConfig: storage) { cluster in
            // Instance two: the same configuration, its own port and data_dir.
            let secondPort = try LoopbackPort.free()
            let secondConfig = try String(contentsOfFile: cluster.dir.appending("server.toml"), encoding: .utf8)
                .replacingOccurrences(of: "127.0.0.1:\(cluster.port)\"", with: "127.0.0.1:\(secondPort)\"")
                .replacingOccurrences(of: cluster.dir.appending("server-data"), with: cluster.dir.appending("server-data-2"))
            try Cluster.write(secondConfig, to: cluster.dir.appending("server-2.toml"))
            let second = try ChildProcess.start(try BuiltProducts.executable("tether-server"), ["--config", cluster.dir.appending("server-2.toml")])
            defer { second.signal(SIGKILL) }
            guard await second.waitForOutput("listening on", timeout: .seconds(30)) else {
                throw TestSupportError("instance two did not start: \(second.standardError)")
            }
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], url: "ws://127.0.0.1:\(secondPort)/sync")
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")

            // Writes on either side reach the other through the other instance.
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1), ('r2', 'two', 2)")
            try await eventually("b has a's rows", timeout: .seconds(30)) { try await b.rows("p").contains("r2|two") }
            try await b.sql("p", "UPDATE orders SET total = 20 WHERE id = 'r2'; INSERT INTO orders (id, customer, total) VALUES ('r3', 'three', 3)")
            try await eventually("a has b's rows", timeout: .seconds(30)) { try await a.rows("p").contains("r3|three") }
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            #expect(try await a.rows("p") == b.rows("p"))
            let atSnapshot = try await a.rows("p")

            // A snapshot and a restore through instance one; B, on instance two, synced past it and resets.
            let snapshot = try await cluster.admin(["snapshot", "p"])
            try await b.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r4', 'four', 4)")
            try await b.waitSynced("p")
            try await eventually("a has r4", timeout: .seconds(30)) { try await a.rows("p").contains("r4|four") }
            try await cluster.admin(["restore", "p", snapshot])
            try await eventually("b reset", timeout: .seconds(60)) {
                try await b.json(["resets"])["resets"]?.arrayValue?.last?["outcome"]?.stringValue == "recovered"
            }
            try await eventually("a reset", timeout: .seconds(60)) {
                try await a.json(["resets"])["resets"]?.arrayValue?.last?["outcome"]?.stringValue == "recovered"
            }
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            // r4 was synced before the snapshot was restored: it is gone everywhere, the rest is the snapshot.
            #expect(try await a.rows("p") == atSnapshot)
            #expect(try await b.rows("p") == atSnapshot)
            _ = await a.stop()
            _ = await b.stop()
        }
    }
}
