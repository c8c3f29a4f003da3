import Foundation
import Testing
import TetherSyncClient
import TetherProtocol
import TetherServer
import TetherTestSupport

/// `tether-server admin …`, `restore-backup` and `--check-config` as an operator runs them.
@Suite struct AdminCLITests {
    @Test func exitCodes() async throws {
        try await withServer { server in
            let status = try await server.adminCLI(["status"])
            #expect(status.status == 0)
            #expect(status.stdout.contains("sync protocol \(TetherVersion.syncProtocol)"))
            let json = try await server.adminCLI(["status", "--json"])
            let decoded = try JSONDecoder().decode(AdminAPI.Status.self, from: Data(json.stdout.utf8))
            #expect(decoded.server.syncTerminated == false)
            // A wrong admin token is refused: runtime error.
            let refused = try await server.adminCLI(["status"], token: "wrong")
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("not accepted"))
            #expect(!refused.stderr.contains("wrong"))
            // Usage errors: a missing argument, an illegal partition name.
            #expect(try await server.adminCLI(["snapshot"]).status == 2)
            let illegal = try await server.adminCLI(["snapshot", "bad name"])
            #expect(illegal.status == 2)
            #expect(illegal.stderr.contains("not a legal partition name"))
            #expect(try await server.adminCLI(["recovery", "maybe"]).status == 2)
            // An unknown partition is a runtime error.
            #expect(try await server.adminCLI(["snapshot", "store-99"]).status == 1)
            // Nothing listening: runtime error.
            let unreachable = try await server.runCLI(["admin", "--url", "http://127.0.0.1:1", "--token-file", server.directory + "/admin.token", "status"])
            #expect(unreachable.status == 1)
            #expect(unreachable.stderr.contains("cannot reach"))
            #expect(try await server.runCLI(["--version"]).stdout.contains("tether-server \(TetherVersion.release)"))
        }
    }

    @Test func snapshotRestoreTerminateRecoveryThroughTheCLI() async throws {
        try await withServer { server in
            _ = try await ErrorCodeTests().syncedDevice(server, writes: 2)
            let snapshot = try await server.adminCLI(["snapshot", "store-17"])
            #expect(snapshot.status == 0)
            let id = snapshot.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(id.count == 16)
            _ = try await ErrorCodeTests().syncedDevice(server, writes: 1)
            let restore = try await server.adminCLI(["restore", "store-17", id])
            #expect(restore.status == 0)
            #expect(restore.stdout.contains("server version 2"))
            #expect(try await server.adminCLI(["restore", "store-17", "0000000000000000"]).status == 1)
            #expect(try await server.adminCLI(["recovery", "off"]).stdout.contains("client recovery off"))
            #expect(try await server.adminCLI(["terminate-sync"]).status == 0)
            #expect(try await server.admin.status().server.syncTerminated)
            #expect(try await server.adminCLI(["enable-sync"]).stdout.contains("sync enabled"))
            let status = try await server.adminCLI(["status"])
            #expect(status.stdout.contains("client recovery: off"))
            #expect(status.stdout.contains("store-17"))
        }
    }

    @Test func schemaApplyPrintsWhetherBreakingAndNeedsTheFlag() async throws {
        try await withServer { server in
            let v2 = server.directory + "/schema-v2.toml"
            try (ServerProcess.schemaV1.replacingOccurrences(of: "version = 1", with: "version = 2") + "\nsku = \"text?\"\n")
                .write(toFile: v2, atomically: true, encoding: .utf8)
            let nonBreaking = try await server.adminCLI(["schema", "apply", v2])
            #expect(nonBreaking.status == 0)
            #expect(nonBreaking.stdout.contains("non-breaking"))
            #expect(nonBreaking.stdout.contains("column orders.sku text? added"))
            #expect(nonBreaking.stdout.contains("applied"))

            let v3 = server.directory + "/schema-v3.toml"
            try ServerProcess.schemaV1.replacingOccurrences(of: "version = 1", with: "version = 3")
                .replacingOccurrences(of: "note = \"text?\"", with: "")
                .write(toFile: v3, atomically: true, encoding: .utf8)
            let refused = try await server.adminCLI(["schema", "apply", v3])
            #expect(refused.status == 1)
            #expect(refused.stdout.contains("breaking"))
            #expect(refused.stdout.contains("not applied"))
            #expect(refused.stderr.contains("--allow-breaking"))
            #expect(try await server.admin.status().server.schemaVersion == 2)
            let applied = try await server.adminCLI(["schema", "apply", v3, "--allow-breaking", "--json"])
            #expect(applied.status == 0)
            let result = try JSONDecoder().decode(AdminAPI.SchemaApplied.self, from: Data(applied.stdout.utf8))
            #expect(result.applied && result.breaking && result.version == 3)

            let invalid = server.directory + "/schema-bad.toml"
            try "version = 4\n[tables.orders]\nprimary_key = \"id\"\n[tables.orders.columns]\nid = \"uuid\"\n".write(toFile: invalid, atomically: true, encoding: .utf8)
            let bad = try await server.adminCLI(["schema", "apply", invalid])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("schema-bad.toml:5: tables.orders.columns.id"))
        }
    }

    @Test func grantAndRevokeAtRunTime() async throws {
        try await withServer { server in
            #expect(try await server.adminCLI(["grant", "nobody", "store-*", "read"]).status == 0)
            let reply = try await withConnection(server) { connection in
                try await TestDevice(partition: "store-17", user: "nobody").bind(on: connection)
            }
            #expect(reply.access == .read)
            #expect(try await server.adminCLI(["revoke", "nobody", "store-*"]).status == 0)
            #expect(try await server.adminCLI(["revoke", "nobody", "store-*"]).status == 1)
            #expect(try await server.adminCLI(["grant", "ghost", "store-*", "read"]).status == 1)
            #expect(try await server.adminCLI(["grant", "nobody", "bad/pattern", "read"]).status == 2)
            // Runtime grants survive a restart.
            #expect(try await server.adminCLI(["grant", "nobody", "store-17", "readwrite"]).status == 0)
            try await server.stop()
            try await server.start()
            let again = try await withConnection(server) { connection in
                try await TestDevice(partition: "store-17", user: "nobody").bind(on: connection)
            }
            #expect(again.access == .readwrite)
        }
    }

    @Test func backupWhileRunningAndRestoreBackup() async throws {
        try await withServer { server in
            let synced = try await ErrorCodeTests().syncedDevice(server, writes: 3)
            let backup = server.directory + "/backup.sqlite"
            let result = try await server.adminCLI(["backup", "--out", backup])
            #expect(result.status == 0)
            #expect(result.stdout.contains("backup written to \(backup)"))
            // The running server holds its data dir.
            let busy = try await server.runCLI(["restore-backup", "--from", backup, "--data-dir", server.directory + "/data"])
            #expect(busy.status == 1)
            #expect(busy.stderr.contains("stop the server first"))
            #expect(try await server.runCLI(["restore-backup", "--from", server.directory + "/nope", "--data-dir", server.directory + "/x"]).status == 2)

            // A second server restored from the backup has the same data.
            try await withServer { other in
                try await other.stop()
                let restored = try await other.runCLI(["restore-backup", "--from", backup, "--data-dir", other.directory + "/data"])
                #expect(restored.status == 0)
                #expect(restored.stdout.contains("1 partitions"))
                try await other.start()
                let status = try await other.admin.status()
                #expect(status.partitions.first?.serverVersion == 3)
                let rows = try await withConnection(other) { connection in
                    let device = TestDevice()
                    try await device.bind(on: connection)
                    return device.state.rows
                }
                // State rows carry every column (nullable ones the device left out are null).
                #expect(rows.mapValues { $0.filter { !$0.value.isNull } } == synced.rows)
            }
        }
    }

    @Test func checkConfigNamesFileKeyAndLine() async throws {
        try await withServer { server in
            let good = try await server.runCLI(["--config", server.configPath, "--check-config"])
            #expect(good.status == 0)
            let bad = server.directory + "/bad.toml"
            try """
                listen = "nowhere"
                data_dir = "relative/path"
                admin_token_file = "\(server.directory)/admin.token"
                schema = "\(server.directory)/schema.toml"
                history_horizon_days = 0
                typo = 1

                [[grant]]
                user = "ghost"
                partitions = ["a b"]
                access = "write"
                """.write(toFile: bad, atomically: true, encoding: .utf8)
            let result = try await server.runCLI(["--config", bad, "--check-config"])
            #expect(result.status == 2)
            let lines = result.stderr.split(separator: "\n").map(String.init)
            #expect(lines.contains("\(bad):1: listen: \"nowhere\" is not host:port (port 0-65535)"))
            #expect(lines.contains("\(bad):2: data_dir: \"relative/path\" must be an absolute path"))
            #expect(lines.contains("\(bad):5: history_horizon_days: 0 is out of range 1...36500"))
            #expect(lines.contains("\(bad):6: typo: unknown key"))
            #expect(lines.contains { $0.hasPrefix("\(bad):9: grant[0].user: no [[user]] is named \"ghost\"") })
            #expect(lines.contains { $0.hasPrefix("\(bad):10: grant[0].partitions[0]:") })
            #expect(lines.contains { $0.hasPrefix("\(bad):11: grant[0].access:") })
        }
    }

    /// `token new USER`: a fresh 256-bit token in the user's token_file (0600), printed once on
    /// stdout and nowhere else; the running server accepts it after a reload.
    @Test func tokenNewWritesARandomTokenTheServerAcceptsAfterReload() async throws {
        try await withServer { server in
            let path = server.directory + "/users/pos-17.token"
            let refused = try await server.runCLI(["token", "new", "pos-17", "--config", server.configPath])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("exists; give --force"))
            let made = try await server.runCLI(["token", "new", "pos-17", "--config", server.configPath, "--force"])
            #expect(made.status == 0, "\(made.stderr)")
            let token = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
            #expect(!made.stderr.contains(token))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == token + "\n")
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let again = try await server.runCLI(["token", "new", "pos-17", "--config", server.configPath, "--force"])
            #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) != token)
            // An unknown user is a usage error; --out writes anywhere.
            #expect(try await server.runCLI(["token", "new", "ghost", "--config", server.configPath]).status == 2)
            let out = server.directory + "/extra.token"
            #expect(try await server.runCLI(["token", "new", "ghost", "--config", server.configPath, "--out", out]).status == 0)
            // --admin: the admin token file; neither a user nor --admin is a usage error.
            let admin = try await server.runCLI(["token", "new", "--admin", "--config", server.configPath, "--force"])
            #expect(admin.status == 0)
            #expect(try String(contentsOfFile: server.directory + "/admin.token", encoding: .utf8) == admin.stdout)
            #expect(try await server.runCLI(["token", "new", "--config", server.configPath]).status == 2)
            // The server takes the file's new token at its reload, and never logs it.
            let newest = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            server.signal(SIGHUP)
            _ = try await eventually("the reloaded token to be accepted", timeout: .seconds(20)) { () async throws -> Bool? in
                try await Self.bindAccepted(server, token: newest) ? true : nil
            }
            #expect(!server.log.contains(newest))
            let status = try await server.adminCLI(["status"], token: admin.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(status.status == 0, "the new admin token is accepted after the reload")
        }
    }

    /// Whether the server binds a session with `token` (else it answers with an error).
    static func bindAccepted(_ server: ServerProcess, token: String) async throws -> Bool {
        let box = AcceptedBox()
        try await withRawConnection(server) { raw in
            try await raw.send(helloMessage)
            try await raw.send(.bind(BindRequest(session: 1, partition: "store-17", token: token, identity: nil)))
            let accepted = try await raw.receive { message -> Bool? in
                switch message {
                case .bound: true
                case .error: false
                default: nil
                }
            }
            await box.set(accepted)
        }
        return await box.accepted
    }

    actor AcceptedBox {
        var accepted = false
        func set(_ value: Bool) { accepted = value }
    }
}
