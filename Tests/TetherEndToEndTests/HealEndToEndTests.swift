import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Healing a restored server from the fleet (docs/client-reset.md, "Healing a restored
/// server"), with real processes: the server is restored from a backup (or its database file is
/// put back while it is stopped), devices that synced inside the lost window reconnect in
/// several orders, and the server ends with the newest view any of them held plus every write
/// made since the restore.
@Suite(.serialized, .timeLimit(.minutes(8)))
struct HealEndToEndTests {
    /// The devices of ``lostWindow(_:)``: `a` synced the whole window, `b` part of it and has
    /// offline edits, `c` only its start with nothing unsynced, and `w` stopped syncing before
    /// the backup and writes while the server is down (its writes land after the restore).
    struct Scene {
        var a: ClusterAgent, b: ClusterAgent, c: ClusterAgent, w: ClusterAgent
        var backup: String
        /// The version `a` synced to: the end of the lost window.
        var newest: Int
        var devices: [String: ClusterAgent] { ["a": a, "b": b, "c": c, "w": w] }
    }

    /// The server's state at the end, field by field: `a`'s view (r0 total 100, r1 deleted, r2
    /// and r3 inserted in the window) with the writes made after the restore on top — `w`'s
    /// note on r0 and its r4, `b`'s offline edits of r0 and r2 (replayed by its reset).
    static let healed = "r0|ZERO|100.0|w after\nr2|two|2.0|b offline\nr3|three|3.0|-\nr4|four|4.0|-\n"
    /// The same after a rollback: the backup's r0 with the writes made after the restore; b's
    /// edit of r2, a row only the window held, is dropped (recovery rule 2).
    static let rolledBack = "r0|ZERO|0.0|w after\nr4|four|4.0|-\n"

    /// Builds the scene, then stops the server: the backup holds r0 only; the window (versions
    /// past the backup) inserts r1, r2, r3, updates r0 and deletes r1.
    static func lostWindow(_ cluster: Cluster, modeOfA: String? = nil, afterHookOfA: String? = nil) async throws -> Scene {
        let resetOfA = (modeOfA.map { ["mode = \"\($0)\""] } ?? []) + (afterHookOfA.map { ["after_hook = \"\($0)\""] } ?? [])
        let a = try cluster.agent("a", partitions: ["p"], extra: resetOfA.isEmpty ? "" : "[reset]\n" + resetOfA.joined(separator: "\n"))
        let b = try cluster.agent("b", partitions: ["p"])
        let c = try cluster.agent("c", partitions: ["p"])
        let w = try cluster.agent("w", partitions: ["p"])
        for agent in [a, b, c, w] { try await agent.start() }
        for agent in [a, b, c, w] { try await agent.waitSynced("p") }
        try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r0', 'zero', 0)")
        for agent in [a, b, c, w] { try await agent.waitSynced("p") }
        try await w.ctl(["pause", "p"])
        let backup = cluster.dir.appending("backup.sqlite")
        try await cluster.admin(["backup", "--out", backup])

        try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1)")
        for agent in [a, b, c] { try await agent.waitSynced("p") }
        try await c.ctl(["pause", "p"])
        try await a.sql("p", "UPDATE orders SET total = 100 WHERE id = 'r0'")
        try await b.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r2', 'two', 2)")
        try await eventually("a and b have each other's writes", timeout: .seconds(30)) {
            let (rowsA, rowsB) = (try await a.rows("p"), try await b.rows("p"))
            return rowsA.contains("r2|two") && rowsB.contains("r0|zero|100.0")
        }
        for agent in [a, b] { try await agent.waitSynced("p") }
        try await b.ctl(["pause", "p"])
        try await b.sql("p", "UPDATE orders SET note = 'b offline' WHERE id = 'r2'; UPDATE orders SET customer = 'ZERO' WHERE id = 'r0'")
        try await a.sql("p", "DELETE FROM orders WHERE id = 'r1'; INSERT INTO orders (id, customer, total) VALUES ('r3', 'three', 3)")
        try await a.waitSynced("p")
        let newest = try #require(try await a.status("p")?["server_version"]?.numberValue)
        try await a.ctl(["pause", "p"])
        // Written while the server is away: they reach it after the restore.
        try await w.sql("p", "UPDATE orders SET note = 'w after' WHERE id = 'r0'; INSERT INTO orders (id, customer, total) VALUES ('r4', 'four', 4)")
        await cluster.killServer()
        return Scene(a: a, b: b, c: c, w: w, backup: backup, newest: Int(newest))
    }

    /// Resumes `w` (its writes land after the restore), then the others in `order`, each
    /// waited for until its reset is done and it is synced.
    static func reconnect(_ scene: Scene, order: [String]) async throws {
        try await scene.w.ctl(["resume", "p"])
        try await scene.w.waitSynced("p", timeout: 60)
        for name in order {
            let agent = try #require(scene.devices[name])
            try await agent.ctl(["resume", "p"])
            try await eventually("\(name)'s reset done", timeout: .seconds(90)) {
                try await agent.resets().last?["phase"] == "done"
            }
            try await agent.waitSynced("p", timeout: 60)
        }
        for agent in scene.devices.values { try await agent.waitSynced("p", timeout: 60) }
    }

    static func expectEveryDevice(_ scene: Scene, holds expected: String, _ note: String = "") async throws {
        for (name, agent) in scene.devices {
            let rows = try await agent.rows("p")
            #expect(rows == expected, "\(name) \(note): \(rows)")
        }
    }

    static func restoreBackup(_ cluster: Cluster, _ backup: String, _ mode: String?) async throws -> ChildProcess.Result {
        let result = try await ChildProcess.run(
            try BuiltProducts.executable("tether-server"),
            ["restore-backup", "--from", backup, "--data-dir", cluster.serverDataDirectory()] + (mode.map { [$0] } ?? []))
        #expect(result.status == 0, "\(result)")
        return result
    }

    /// The usual disaster, by hand: the (stopped) server's database file replaced by `backup`,
    /// without telling it, and the server started again.
    static func putDatabaseBack(_ cluster: Cluster, _ backup: String) async throws {
        let database = cluster.serverDataDirectory() + "/server.sqlite"
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try FileManager.default.removeItem(atPath: database)
        try FileManager.default.copyItem(atPath: backup, toPath: database)
        try await cluster.startServer()
    }

    static func heal(_ cluster: Cluster) async throws -> JSONValue? {
        let status = try JSONDecoder().decode(JSONValue.self, from: Data(try await cluster.admin(["--json", "status"]).utf8))
        return status["partitions"]?.arrayValue?.first { $0["name"] == "p" }?["heal"]
    }

    @Test(arguments: [["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"]])
    func restoreBackupHealsTheLostWindowInAnyOrder(order: [String]) async throws {
        try await withCluster { cluster in
            let scene = try await Self.lostWindow(cluster)
            let restored = try await Self.restoreBackup(cluster, scene.backup, "--heal")
            #expect(restored.standardOutput.contains("partition p: versions"), "\(restored.standardOutput)")
            try await cluster.startServer()
            try await Self.reconnect(scene, order: order)
            try await Self.expectEveryDevice(scene, holds: Self.healed, "after \(order)")
            let heal = try #require(try await Self.heal(cluster))
            #expect(heal["mode"] == "heal" && heal["origin"] == "restore-backup" && heal["closed_at"] == .null, "\(heal)")
            #expect(heal["healed_to"]?.numberValue == Double(scene.newest), "\(heal)")
            #expect(heal["lost_until"]?.numberValue == Double(scene.newest), "\(heal)")
            // a's view is the newest: it contributes whenever it comes; b's and c's only before
            // it, and c's not after b's (b vouches for every row c has, its own edits on top).
            let contributed = ["a", "b", "c"].filter { name in
                let index = order.firstIndex(of: name)!
                let newer = name == "c" ? ["a", "b"] : name == "b" ? ["a"] : []
                return newer.allSatisfy { index < order.firstIndex(of: $0)! }
            }.count
            #expect(heal["devices"]?.numberValue == Double(contributed), "\(heal)")
            let aReset = try #require(try await scene.a.resets().last)
            #expect((aReset["healed_changes"]?.numberValue ?? 0) >= 1, "\(aReset)")
            #expect(aReset["outcome"] == "recovered")
            // c had nothing unsynced: its reset recovered nothing and lost nothing.
            let cReset = try #require(try await scene.c.resets().last)
            #expect(cReset["recovered_changes"] == 0, "\(cReset)")

            // Closed: a device that comes later resets as after a rollback.
            let closed = try await cluster.admin(["heal-done", "p"])
            #expect(closed.contains("heal of p closed"), "\(closed)")
            #expect(try await Self.heal(cluster)?["closed_at"] != .null)
        }
    }

    /// A device whose view healed rows fetches the state again before its rewrite: when its
    /// reset ends (its after hook runs) the store already holds what it gave back, never the
    /// restored state without it — an application's update or delete of such a row in that
    /// moment would otherwise have found nothing to change.
    @Test func aContributingDeviceHoldsWhatItHealedWhenItsResetEnds() async throws {
        try await withCluster { cluster in
            let rows = cluster.dir.appending("a-rows-at-after-hook")
            let hook = cluster.dir.appending("a-after-hook")
            try Cluster.write(
                "#!/bin/sh\n/usr/bin/sqlite3 \"$TETHER_STORE\" \"SELECT id FROM orders ORDER BY id\" > \(rows)\n", to: hook, mode: 0o755)
            let scene = try await Self.lostWindow(cluster, afterHookOfA: hook)
            _ = try await Self.restoreBackup(cluster, scene.backup, "--heal")
            try await cluster.startServer()
            try await Self.reconnect(scene, order: ["a", "b", "c"])
            let reset = try #require(try await scene.a.resets().last)
            #expect((reset["healed_changes"]?.numberValue ?? 0) >= 1, "\(reset)")
            // r2 and r3 exist only in the window (a's view); r1 was deleted in it.
            #expect(try String(contentsOfFile: rows, encoding: .utf8) == "r0\nr2\nr3\nr4\n")
            // Brought up to date with the history since its download, not downloaded twice.
            #expect(scene.a.log.contains("server state caught up from version"), "\(scene.a.log)")
            #expect(!scene.a.log.contains("fetched again whole"))
            try await Self.expectEveryDevice(scene, holds: Self.healed)
        }
    }

    @Test func aRollbackRestoreLosesTheWindowAsBefore() async throws {
        try await withCluster { cluster in
            let scene = try await Self.lostWindow(cluster)
            let restored = try await Self.restoreBackup(cluster, scene.backup, "--rollback")
            #expect(restored.standardOutput.contains("rolled back"), "\(restored.standardOutput)")
            try await cluster.startServer()
            try await Self.reconnect(scene, order: ["a", "b", "c"])
            try await Self.expectEveryDevice(scene, holds: Self.rolledBack)
            let heal = try #require(try await Self.heal(cluster))
            #expect(heal["mode"] == "rollback" && heal["devices"] == 0 && heal["healed_changes"] == 0, "\(heal)")
            for agent in [scene.a, scene.b, scene.c] {
                let reset = try #require(try await agent.resets().last)
                #expect((reset["healed_changes"]?.numberValue ?? 0) == 0, "\(reset)")
            }
        }
    }

    /// A device in `discard_unsynced_changes` mode still gives back what it had synced: its
    /// unsynced write is discarded (it is in the backup), its view heals the server.
    @Test func aDiscardingDeviceStillGivesItsSyncedRowsBack() async throws {
        try await withCluster { cluster in
            let scene = try await Self.lostWindow(cluster, modeOfA: "discard_unsynced_changes")
            try await scene.a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('a-offline', 'lost on purpose', 9)")
            _ = try await Self.restoreBackup(cluster, scene.backup, "--heal")
            try await cluster.startServer()
            try await Self.reconnect(scene, order: ["a", "b", "c"])
            try await Self.expectEveryDevice(scene, holds: Self.healed)
            let reset = try #require(try await scene.a.resets().last)
            #expect(reset["outcome"] == "discarded" && (reset["healed_changes"]?.numberValue ?? 0) >= 1, "\(reset)")
            let backup = try #require(reset["backup_path"]?.stringValue)
            let kept = try await ChildProcess.run("/usr/bin/sqlite3", [backup, "SELECT id FROM orders WHERE id = 'a-offline'"])
            #expect(kept.standardOutput == "a-offline\n", "the discarded write is in the backup")
        }
    }

    /// The usual disaster: the database file put back while the server was stopped, without
    /// telling it. The first device that binds ahead of the history opens the heal
    /// (`[history] devices_ahead`, default heal).
    @Test func aDatabaseFilePutBackIsFoundByTheDevicesAndHealed() async throws {
        try await withCluster { cluster in
            let scene = try await Self.lostWindow(cluster)
            try await Self.putDatabaseBack(cluster, scene.backup)
            try await Self.reconnect(scene, order: ["b", "a", "c"])
            try await Self.expectEveryDevice(scene, holds: Self.healed)
            let heal = try #require(try await Self.heal(cluster))
            #expect(heal["mode"] == "heal" && heal["origin"] == "devices-ahead", "\(heal)")
            #expect(heal["healed_to"]?.numberValue == Double(scene.newest), "\(heal)")
        }
    }

    /// The same disaster when the first device to come back is one that was behind (`w`
    /// stopped syncing before the backup): its uploads move the head past the versions the
    /// others synced before any of them binds. Their versions, with salts the history does not
    /// hold and past where it ended when the server started, still open the heal.
    @Test func aDatabaseFilePutBackIsHealedWhenADeviceThatWasBehindMovesTheHeadFirst() async throws {
        try await withCluster { cluster in
            let scene = try await Self.lostWindow(cluster)
            try await Self.putDatabaseBack(cluster, scene.backup)
            try await scene.w.ctl(["resume", "p"])
            try await scene.w.waitSynced("p", timeout: 60)
            // One version per write, more than the window had; r4 ends as w first wrote it.
            for total in 10...(scene.newest + 10) {
                try await scene.w.sql("p", "UPDATE orders SET total = \(total) WHERE id = 'r4'")
                try await scene.w.waitSynced("p", timeout: 60)
            }
            try await scene.w.sql("p", "UPDATE orders SET total = 4 WHERE id = 'r4'")
            try await scene.w.waitSynced("p", timeout: 60)
            let head = try #require(try await scene.w.status("p")?["server_version"]?.numberValue)
            #expect(Int(head) > scene.newest, "the head \(head) is past the window's end \(scene.newest)")
            try await Self.reconnect(scene, order: ["c", "a", "b"])
            try await Self.expectEveryDevice(scene, holds: Self.healed)
            let heal = try #require(try await Self.heal(cluster))
            #expect(heal["mode"] == "heal" && heal["origin"] == "devices-ahead", "\(heal)")
        }
    }

    /// A heal cut short: the server killed while a device sends its view a row per chunk, then
    /// the device killed in the middle of sending it again. The reset resumes at `healing`,
    /// sends the same contribution again and the result is the same.
    @Test func aHealInterruptedByKillsOfTheServerAndTheAgentCompletes() async throws {
        try await withCluster { cluster in
            let scene = try await Self.lostWindow(cluster)
            _ = try await Self.restoreBackup(cluster, scene.backup, nil)
            try await cluster.startServer()
            try await scene.w.ctl(["resume", "p"])
            try await scene.w.waitSynced("p", timeout: 60)
            // a sends one row per chunk and stops after the first while the hold file exists.
            let hold = scene.a.dir + "/hold-heal"
            try Cluster.write("", to: hold)
            _ = await scene.a.stop()
            try await scene.a.start(environment: ["TETHER_FAULT_HEAL_CHUNK_ROWS": "1", "TETHER_FAULT_HOLD_HEAL_FILE": hold])
            try await scene.a.ctl(["resume", "p"])
            try await eventually("a holds inside its contribution", timeout: .seconds(60)) {
                scene.a.log.contains("holding the heal contribution")
            }
            await cluster.killServer()
            try await cluster.startServer()
            try FileManager.default.removeItem(atPath: hold)
            try await eventually("a released", timeout: .seconds(30)) { scene.a.log.contains("heal contribution released") }
            // The next chunk fails on the dead connection; the phase is retried (after a backoff
            // of a second), sends the first chunk again and holds again.
            try Cluster.write("", to: hold)
            try await eventually("a holds again after the server came back", timeout: .seconds(60)) {
                scene.a.log.components(separatedBy: "holding the heal contribution").count >= 3
            }
            await scene.a.stop(SIGKILL)
            try FileManager.default.removeItem(atPath: hold)
            try await scene.a.start(environment: ["TETHER_FAULT_HEAL_CHUNK_ROWS": "1"])
            try await eventually("a's reset done", timeout: .seconds(90)) { try await scene.a.resets().last?["phase"] == "done" }
            try await scene.a.waitSynced("p", timeout: 60)
            try await Self.reconnect(scene, order: ["b", "c"])
            try await Self.expectEveryDevice(scene, holds: Self.healed)
            let heal = try #require(try await Self.heal(cluster))
            #expect(heal["healed_to"]?.numberValue == Double(scene.newest), "\(heal)")
        }
    }

    /// `admin restore --heal` on one of two instances sharing PostgreSQL, devices bound to
    /// both: the window comes back on both, written after the restore included.
    @Test func aSnapshotRestoreHealsAcrossTwoInstances() async throws {
        try await withCluster(ClusterSettings(storage: .postgresql, instances: 2)) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], url: cluster.url(instance: 1))
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1)")
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            let snapshot = try await cluster.admin(["snapshot", "p"])
            try await b.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r2', 'two', 2); UPDATE orders SET total = 10 WHERE id = 'r1'")
            try await b.waitSynced("p")
            try await eventually("a has r2", timeout: .seconds(30)) { try await a.rows("p").contains("r2|two") }
            try await a.waitSynced("p")
            try await a.ctl(["pause", "p"])
            let restored = try await cluster.admin(["restore", "p", snapshot, "--heal"])
            #expect(restored.contains("give them back"), "\(restored)")
            try await eventually("b reset", timeout: .seconds(60)) { try await b.resets().last?["phase"] == "done" }
            try await b.waitSynced("p")
            try await b.sql("p", "UPDATE orders SET note = 'after' WHERE id = 'r2'")
            try await b.waitSynced("p")
            try await a.ctl(["resume", "p"])
            try await eventually("a reset", timeout: .seconds(60)) { try await a.resets().last?["phase"] == "done" }
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            let expected = "r1|one|10.0|-\nr2|two|2.0|after\n"
            #expect(try await a.rows("p") == expected)
            #expect(try await b.rows("p") == expected)
            let heal = try #require(try await Self.heal(cluster))
            #expect(heal["origin"] == "restore" && (heal["devices"]?.numberValue ?? 0) >= 1, "\(heal)")
            _ = await a.stop()
            _ = await b.stop()
        }
    }
}
