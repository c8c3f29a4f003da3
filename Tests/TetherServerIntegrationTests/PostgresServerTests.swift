import Foundation
import Testing
import TetherSyncClient
import TetherProtocol
import TetherServer
import TetherTestSupport
import TetherTestTraits
#if canImport(Glibc)
import Glibc
#endif

/// Real `tether-server` processes on one real PostgreSQL database: the contract of
/// docs/server.md "PostgreSQL" (several instances, one fleet).
@Suite(.postgresCluster) struct PostgresServerTests {
    /// Runs `body` with `count` server instances sharing a fresh database.
    func withInstances<T>(_ count: Int, _ body: ([ServerProcess]) async throws -> T) async throws -> T {
        let database = try await PostgresDatabase.make()
        var servers: [ServerProcess] = []
        do {
            for _ in 0..<count { servers.append(try await ServerProcess(extraConfig: database.storageTable())) }
            let result = try await body(servers)
            for server in servers { await server.shutdown() }
            database.remove()
            return result
        } catch {
            for server in servers {
                print("--- server log \(server.directory):\n\(server.log.suffix(4000))")
                await server.shutdown()
            }
            database.remove()
            throw error
        }
    }

    @Test func checkConfigAsksTheDatabaseAndNeverShowsThePassword() async throws {
        try await withInstances(1) { servers in
            let server = servers[0]
            let good = try await server.runCLI(["--check-config", "--config", server.configPath])
            #expect(good.status == 0, "\(good)")
            #expect(good.stdout.contains("answers (PostgreSQL 15"), "\(good.stdout)")
            #expect(server.log.contains("storage: PostgreSQL postgresql://"))

            let database = try TestPostgres.current()
            let config = try String(contentsOfFile: server.configPath, encoding: .utf8)
            // A wrong password: the check fails naming the key and its line, and prints no password.
            let wrongFile = server.directory + "/wrong.password"
            let wrong = "not-the-password-\(UUID().uuidString)"
            try (wrong + "\n").write(toFile: wrongFile, atomically: true, encoding: .utf8)
            chmod(wrongFile, 0o600)
            let wrongConfig = server.directory + "/wrong.toml"
            try config.replacingOccurrences(of: #"password_file = ""#, with: #"password_file = "\#(wrongFile)"# + "\"\n# was: ")
                .write(toFile: wrongConfig, atomically: true, encoding: .utf8)
            let refused = try await server.runCLI(["--check-config", "--config", wrongConfig])
            #expect(refused.status == 2, "\(refused)")
            #expect(refused.stderr.contains("storage.url: the database does not answer"), "\(refused.stderr)")
            #expect(refused.stderr.contains(#/wrong\.toml:\d+: storage\.url/#), "\(refused.stderr)")
            for secret in [wrong, database.password] {
                #expect(!refused.stderr.contains(secret) && !refused.stdout.contains(secret))
                #expect(!server.log.contains(secret))
            }
            // Nothing listens on the port: the same, quickly.
            let closedPort = Int(try LoopbackPort.free())
            let closedConfig = server.directory + "/closed.toml"
            try config.replacingOccurrences(of: "127.0.0.1:\(database.port)/", with: "127.0.0.1:\(closedPort)/")
                .write(toFile: closedConfig, atomically: true, encoding: .utf8)
            let closed = try await server.runCLI(["--check-config", "--config", closedConfig])
            #expect(closed.status == 2 && closed.stderr.contains("storage.url"), "\(closed)")
            // A password file others may read is refused like a token file.
            chmod(wrongFile, 0o644)
            let loose = try await server.runCLI(["--check-config", "--config", wrongConfig])
            #expect(loose.status == 2 && loose.stderr.contains("storage.password_file"), "\(loose)")
        }
    }

    @Test func devicesOnTwoInstancesConverge() async throws {
        try await withInstances(2) { servers in
            let (one, two) = (servers[0], servers[1])
            // A binds on instance one, B on instance two; both keep their sessions open.
            try await withConnection(one) { first in
                try await withConnection(two) { second in
                    let a = TestDevice()
                    let b = TestDevice()
                    try await a.bind(on: first)
                    try await b.bind(on: second)
                    a.write(.insert("orders", .text("o1"), ["customer": .text("Ada"), "total": .real(10), "note": .null]))
                    try await a.upload()
                    try await a.syncUntilCaughtUp()
                    // Delivered by the notification, well before the instances' 5 s re-read.
                    let clock = ContinuousClock()
                    let started = clock.now
                    try await b.syncUntil(version: 1)
                    #expect(clock.now - started < .seconds(3))
                    b.write(.update("orders", .text("o1"), ["total": .real(12)]))
                    b.write(.insert("orders", .text("o2"), ["customer": .text("Bob"), "total": .real(1)]))
                    try await b.upload()
                    try await b.syncUntilCaughtUp()
                    try await a.syncUntil(version: b.state.lastServerVersion.version)
                    #expect(a.state.rows == b.state.rows && a.state.rows.count == 2)
                    #expect(a.state.lastServerVersion == b.state.lastServerVersion)
                }
            }
            let status = try await two.admin.status()
            #expect(status.partitions.first?.serverVersion == 2 && status.partitions.first?.clientFiles == 2)
        }
    }

    @Test func restoreOnOneInstanceResetsDevicesOnTheOther() async throws {
        try await withInstances(2) { servers in
            let (one, two) = (servers[0], servers[1])
            let synced = try await withConnection(two) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("o1"), ["customer": .text("Ada"), "total": .real(1)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
                return device.state
            }
            let snapshot = try await one.admin.snapshot("store-17")
            let ahead = try await withConnection(two) { connection in
                let device = TestDevice(state: synced)
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("o2"), ["customer": .text("Bob"), "total": .real(2)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
                // The restore on instance one ends this session on instance two promptly.
                let clock = ContinuousClock()
                let started = clock.now
                _ = try await one.admin.restore("store-17", snapshot: snapshot.snapshot)
                let error = try await device.nextError()
                #expect(error.code == .otherSessionError && error.retryAfterMilliseconds == 0, "\(error)")
                #expect(clock.now - started < .seconds(3))
                return device.state
            }
            #expect(ahead.lastServerVersion.version == 2)
            // Binding again on instance two: ahead of the restored history, the device resets (211).
            let error = try await withConnection(two) { connection in
                do {
                    try await TestDevice(state: ahead).bind(on: connection)
                    return SyncError(.otherSessionError, "bound")
                } catch let error as SyncError {
                    return error
                }
            }
            #expect(error.code == .divergingHistories, "\(error)")
        }
    }

    @Test func adminCommandsOnOneInstanceReachSessionsOnTheOther() async throws {
        try await withInstances(2) { servers in
            let (one, two) = (servers[0], servers[1])
            try await withConnection(two) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                _ = try await one.admin.terminateSync()
                let error = try await device.nextError()
                #expect(error.code == .otherSessionError, "\(error)")
            }
            #expect(try await two.admin.status().server.syncTerminated)
            _ = try await one.admin.enableSync()
            _ = try await one.admin.setRecovery(false)
            _ = try await eventually("instance two to see the flags", timeout: .seconds(30)) {
                let status = try await two.admin.status()
                return !status.server.syncTerminated && !status.server.clientRecovery ? true : nil
            }
            try await withConnection(two) { connection in
                let device = TestDevice(partition: "catalog-eu")
                try await device.bind(on: connection)
                _ = try await one.admin.revoke(user: "pos-17", pattern: "catalog-*")
                let error = try await device.nextError()
                #expect(error.code == .permissionDenied, "\(error)")
            }
        }
    }

    @Test func killNineOfAnInstanceLosesNothing() async throws {
        try await withInstances(2) { servers in
            let (one, two) = (servers[0], servers[1])
            let box = StateBox()
            // The device's session is still bound on instance one when it is killed.
            _ = try? await withConnection(one) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                for i in 1...5 {
                    device.write(.insert("orders", .text("o\(i)"), ["customer": .text("A"), "total": .real(Double(i))]))
                    try await device.upload()
                }
                try await device.syncUntilCaughtUp()
                box.state = device.state
                // Meanwhile another instance refuses the same store: it is bound on instance one (108).
                box.error = try await bindError(two, TestDevice(state: device.state))
                try await one.kill9()
            }
            let before = try #require(box.state)
            #expect(box.error?.code == .clientFileBoundInOtherSession, "\(String(describing: box.error))")
            // The killed instance's lease died with it: the device fails over at once and goes on.
            let after = try await withConnection(two) { connection in
                let device = TestDevice(state: before)
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("o6"), ["customer": .text("B"), "total": .real(6)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
                return device.state
            }
            #expect(after.lastServerVersion.version == 6 && after.rows.count == 6)
            let fresh = try await withConnection(two) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                return device.state
            }
            // A state download lists every column (here the nullable `note` nobody wrote, as null).
            #expect(fresh.rows.mapValues { $0.filter { $0.key != "note" } } == after.rows)
            // The killed instance starts again on the same database.
            try await one.start()
            #expect(try await one.admin.status().partitions.first?.serverVersion == 6)
        }
    }

    /// The bind error of `device` on `server` (nil when it binds).
    func bindError(_ server: ServerProcess, _ device: TestDevice) async throws -> SyncError? {
        let state = device.state
        return try await withConnection(server) { connection in
            do {
                try await TestDevice(state: state).bind(on: connection)
                return nil
            } catch let error as SyncError {
                return error
            }
        }
    }
}

/// Results carried out of a connection that ends with its server's death.
final class StateBox: @unchecked Sendable {
    var state: DeviceState?
    var error: SyncError?
}
