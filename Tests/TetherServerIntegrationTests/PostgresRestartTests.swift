import Foundation
import Testing
import TetherSyncClient
import TetherProtocol
import TetherServer
import TetherTestSupport
import TetherTestTraits

/// A PostgreSQL restart under running instances (its own PostgreSQL: the restart would disturb
/// the other suites' tests).
@Suite(.postgresCluster) struct PostgresRestartTests {
    @Test func aPostgresRestartIsSurvivedWithNothingLost() async throws {
        let database = try await PostgresDatabase.make()
        let one = try await ServerProcess(extraConfig: database.storageTable())
        let two = try await ServerProcess(extraConfig: database.storageTable())
        defer { database.remove() }
        do {
            var state = try await withConnection(one) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("o1"), ["customer": .text("A"), "total": .real(1)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
                return device.state
            }
            try await database.cluster.restart()
            // The device writes while the instances find their connections broken; it binds and
            // uploads again, as the agent does (storage errors are transient), until acknowledged.
            let writer = TestDevice(state: state)
            writer.write(.insert("orders", .text("o2"), ["customer": .text("B"), "total": .real(2)]))
            let withWrite = writer.state
            state = try await eventually("an upload after the restart", timeout: .seconds(30)) {
                try? await withConnection(one, deadline: .seconds(10)) { connection in
                    let device = TestDevice(state: withWrite)
                    try await device.bind(on: connection)
                    try await device.upload()
                    try await device.syncUntilCaughtUp()
                    return device.state
                }
            }
            #expect(state.rows.count == 2 && state.pending.isEmpty && state.lastServerVersion.version == 2)
            // The other instance serves both rows (its pool and LISTEN connection came back).
            let fresh = try await eventually("instance two after the restart", timeout: .seconds(30)) {
                try? await withConnection(two, deadline: .seconds(10)) { connection in
                    let device = TestDevice()
                    try await device.bind(on: connection)
                    return device.state
                }
            }
            #expect(Set(fresh.rows.keys) == Set(state.rows.keys))
            #expect(two.log.contains("notification connection to the database lost"))
            await one.shutdown()
            await two.shutdown()
        } catch {
            print("--- instance one:\n\(one.log.suffix(20000))\n--- instance two:\n\(two.log.suffix(3000))")
            await one.shutdown()
            await two.shutdown()
            throw error
        }
    }
}
