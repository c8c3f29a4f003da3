import Foundation
import Testing
import TetherTestSupport

/// A device and a server written by the previous version (Tests/Fixtures/v1, made by that
/// version's programs: the server's database, the device's store with five unsynced changes and
/// its state database with the partition paused) started with this version's programs: both
/// open their files, the device uploads what it had pending, downloads what it missed, and a
/// new device bootstrapped from the server ends with the same rows.
@Suite(.serialized) struct PreviousVersionEndToEndTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/v1").path

    private static func load(_ fixture: String, into database: String) async throws {
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: database).deletingLastPathComponent().path, withIntermediateDirectories: true)
        let result = try await ChildProcess.run("/usr/bin/sqlite3", ["-bail", database, ".read \(fixtures)/\(fixture)"], timeout: .seconds(60))
        guard result.status == 0 else { throw TestSupportError("loading \(fixture): \(result)") }
    }

    @Test func aPreviousVersionsServerAndDeviceKeepSyncing() async throws {
        try await withCluster(ClusterSettings(token: "device-secret")) { cluster in
            await cluster.stopServer()
            let serverDatabase = cluster.serverDataDirectory() + "/server.sqlite"
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: serverDatabase + suffix) }
            try await Self.load("server.sql", into: serverDatabase)
            try await cluster.startServer()

            let device = try cluster.agent("device", partitions: ["shop"])
            try await Self.load("store.sql", into: device.store("shop"))
            try await Self.load("agent-state.sql", into: device.dir + "/state/state.sqlite")
            #expect(try await device.sql("shop", "SELECT count(*) FROM _tether_changes") == "5\n")
            try await device.start()
            #expect(try await device.ctl(["resume", "shop"]).status == 0)
            try await device.waitSynced("shop")
            #expect(try await device.sql("shop", "SELECT count(*) FROM _tether_log") == "0\n", "the five old changes were uploaded and acknowledged")
            #expect(try await device.sql("shop", "SELECT id, customer, total, coalesce(note, '-') FROM orders ORDER BY id") == """
                A|ann|9.5|-
                B|bob|2.5|again
                D|dan|5.0|new
                E|eva|4.0|it's

                """)
            // A change made after the upgrade syncs like any other.
            _ = try await device.sql("shop", "UPDATE orders SET note = 'after' WHERE id = 'D'")
            try await device.waitSynced("shop")

            let fresh = try cluster.agent("fresh", partitions: ["shop"])
            try await fresh.start()
            try await fresh.waitSynced("shop")
            let rows = "SELECT id, customer, total, coalesce(note, '-') FROM orders ORDER BY id"
            #expect(try await fresh.sql("shop", rows) == (try await device.sql("shop", rows)))
            #expect(try await fresh.sql("shop", "SELECT note FROM orders WHERE id = 'D'") == "after\n")
        }
    }
}
