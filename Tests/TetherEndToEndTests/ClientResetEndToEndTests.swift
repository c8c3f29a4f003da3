import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Client reset end to end (issue "Client reset"): a server restore, sync termination,
/// recovery off, revoked access — and a crash in the middle — with real processes.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ClientResetEndToEndTests {
    /// Hooks that append their environment to `<agent dir>/<event>.env`; the before hook can be
    /// pinned on a FIFO (`<agent dir>/gate`) to crash the agent while it runs.
    static func installHooks(_ agent: ClusterAgent, gate: Bool = false) throws -> String {
        let write: (String, String) throws -> Void = { name, body in
            try Cluster.write("#!/bin/sh\n" + body + "\n", to: agent.dir + "/hooks/" + name, mode: 0o755)
        }
        try write("before", "env | sort > \(agent.dir)/before-reset.env\necho $TETHER_RESET_ID >> \(agent.dir)/before.runs\necho $$ > \(agent.dir)/before.pid\n" + (gate ? "read line < \(agent.dir)/gate\n" : ""))
        try write("after", "env | sort > \(agent.dir)/after-reset.env")
        try write("manual", "env | sort > \(agent.dir)/manual-reset.env")
        return """
            [reset]
            before_hook = "\(agent.dir)/hooks/before"
            after_hook = "\(agent.dir)/hooks/after"
            manual_hook = "\(agent.dir)/hooks/manual"
            """
    }

    static func environment(_ agent: ClusterAgent, _ event: String) -> [String: String] {
        let text = (try? String(contentsOfFile: "\(agent.dir)/\(event).env", encoding: .utf8)) ?? ""
        return Dictionary(text.split(separator: "\n").compactMap { line in
            line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
        }, uniquingKeysWith: { $1 })
    }

    /// A and B synced; a snapshot; a synced write past it; B paused with offline edits covering
    /// the five recovery rules; the server restored to the snapshot; A (reset to it) makes the
    /// server-side edits. Returns once B is resumed.
    static func restoreWithOfflineEdits(_ cluster: Cluster, _ a: ClusterAgent, _ b: ClusterAgent) async throws {
        // Both stores exist before the application writes (sqlite3 would create an empty file).
        try await a.waitSynced("p")
        try await b.waitSynced("p")
        try await a.sql("p", """
            INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1), ('r2', 'two', 2), ('r3', 'three', 3), ('r4', 'four', 4);
            """)
        try await a.waitSynced("p")
        try await b.waitSynced("p")
        let snapshot = try await cluster.admin(["snapshot", "p"])
        try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r5', 'five', 5)")
        try await a.waitSynced("p")
        try await b.waitSynced("p")
        try await b.ctl(["pause", "p"])
        try await b.sql("p", """
            BEGIN;
            INSERT INTO orders (id, customer, total) VALUES ('b-new', 'bee', 9);
            UPDATE orders SET note = 'b edit' WHERE id = 'r2';
            DELETE FROM orders WHERE id = 'r3';
            UPDATE orders SET total = 11 WHERE id = 'r1';
            UPDATE orders SET note = 'b note' WHERE id = 'r4';
            COMMIT;
            """)
        try await cluster.admin(["restore", "p", snapshot, "--rollback"])
        // A synced past the snapshot too: it resets (nothing unsynced) and then edits.
        try await eventually("a reset", timeout: .seconds(60)) { try await lastReset(a) != nil }
        if try await lastReset(a)?["outcome"] == "manual-pending" {
            _ = try await a.ctl(["reset", "initiate", "p"])  // recovery off: a's reset is manual too
        }
        try await eventually("a reset done", timeout: .seconds(60)) {
            ["recovered", "manual-done"].contains(try await lastReset(a)?["outcome"]?.stringValue ?? "")
        }
        try await a.waitSynced("p")
        try await a.sql("p", "DELETE FROM orders WHERE id = 'r2'; UPDATE orders SET total = 10 WHERE id = 'r1'; UPDATE orders SET customer = 'FOUR' WHERE id = 'r4';")
        try await a.waitSynced("p")
        try await b.ctl(["resume", "p"])
    }

    static func lastReset(_ agent: ClusterAgent) async throws -> JSONValue? {
        try await agent.json(["resets"])["resets"]?.arrayValue?.last
    }

    static let serverState = "r1|one|10.0|-\nr3|three|3.0|-\nr4|FOUR|4.0|-\n"

    @Test func recoverReplaysOfflineEditsByTheFiveRules() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start()
            try await b.start(environment: [:])
            try Cluster.write(ClusterAgent.config(dir: b.dir, url: cluster.url, partitions: ["p"], extra: try Self.installHooks(b)), to: b.configPath)
            b.signal(SIGHUP)
            try await eventually("b reloaded") { b.log.contains("configuration reloaded") }
            try await Self.restoreWithOfflineEdits(cluster, a, b)
            try await eventually("b reset", timeout: .seconds(60)) { try await Self.lastReset(b)?["outcome"] == "recovered" }
            try await b.waitSynced("p")
            try await a.waitSynced("p")
            // 1 insert kept; 2 update of a row deleted on the server dropped; 3 delete applied;
            // 4 same field: the device wins; 5 different fields: both kept.
            let expected = "b-new|bee|9.0|-\nr1|one|11.0|-\nr4|FOUR|4.0|b note\n"
            let rowsB = try await b.rows("p"), rowsA = try await a.rows("p")
            #expect(rowsB == expected, "b: \(rowsB)")
            #expect(rowsA == expected, "a: \(rowsA)")
            let reset = try #require(try await Self.lastReset(b))
            #expect(reset["error_code"] == 211)
            #expect(reset["mode"] == "recover_unsynced_changes")
            #expect(reset["phase"] == "done")
            #expect(reset["hooks"]?.arrayValue?.count == 2)
            let backup = try #require(reset["backup_path"]?.stringValue)
            #expect(backup.hasPrefix(b.dir + "/state/recovery/p/") && backup.hasSuffix("-\(reset["id"]?.stringValue ?? "").sqlite"))
            let backupRows = try await ChildProcess.run("/usr/bin/sqlite3", [backup, "SELECT id FROM orders ORDER BY id"]).standardOutput
            #expect(backupRows == "b-new\nr1\nr2\nr4\nr5\n", "the backup is the store before the reset")
            let after = Self.environment(b, "after-reset")
            #expect(after["TETHER_EVENT"] == "after-reset")
            #expect(after["TETHER_RESET_OUTCOME"] == "recovered")
            #expect(after["TETHER_RESET_ID"] == reset["id"]?.stringValue)
            #expect(after["TETHER_BACKUP"] == backup)
            #expect(after["TETHER_STORE"] == b.store("p"))
            #expect(after["TETHER_PARTITION"] == "p")
            #expect(after["TETHER_ERROR_CODE"] == "211")
            #expect(after["TETHER_SERVER_URL"] == cluster.url)
            // Only the variables of docs/contract.md "Reset hooks" (the hook's /bin/sh adds PWD itself).
            #expect(Set(after.keys).subtracting(["PWD"]) == [
                "PATH", "TETHER_EVENT", "TETHER_RESET_ID", "TETHER_PARTITION", "TETHER_STORE", "TETHER_BACKUP",
                "TETHER_RESET_MODE", "TETHER_RESET_OUTCOME", "TETHER_ERROR_CODE", "TETHER_ERROR_MESSAGE", "TETHER_SERVER_URL", "TETHER_RESET_CAUSE",
                "TETHER_HEALED_CHANGES",
            ])
            #expect(!after.values.contains(ClusterSettings.defaultToken), "no token in the hook environment")
            #expect(Self.environment(b, "before-reset")["TETHER_EVENT"] == "before-reset")
        }
    }

    @Test(arguments: ["discard_unsynced_changes", "recover_or_discard_unsynced_changes"])
    func otherAutomaticModes(mode: String) async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], extra: "[reset]\nmode = \"\(mode)\"")
            try await a.start()
            try await b.start()
            try await Self.restoreWithOfflineEdits(cluster, a, b)
            let outcome = mode == "discard_unsynced_changes" ? "discarded" : "recovered"
            try await eventually("b reset", timeout: .seconds(60)) { try await Self.lastReset(b)?["outcome"]?.stringValue == outcome }
            try await b.waitSynced("p")
            let rows = try await b.rows("p")
            #expect(rows == (mode == "discard_unsynced_changes" ? Self.serverState : "b-new|bee|9.0|-\nr1|one|11.0|-\nr4|FOUR|4.0|b note\n"))
        }
    }

    @Test func manualModeWaitsKeepsTheStoreWritableAndIsCarriedOutOnInitiate() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], extra: "[reset]\nmode = \"manual\"")
            try await a.start()
            try await b.start()
            try await Self.restoreWithOfflineEdits(cluster, a, b)
            try await eventually("b pending", timeout: .seconds(60)) { try await b.status("p")?["state"] == "reset-pending" }
            let pending = try #require(try await Self.lastReset(b))
            #expect(pending["outcome"] == "manual-pending")
            #expect(try await b.status("p")?["pending_reset"] == pending["id"])
            try await b.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('while-pending', 'w', 1)")
            let initiated = try await b.ctl(["reset", "initiate", "p"])
            #expect(initiated.status == 0, "\(initiated)")
            try await eventually("b reset done", timeout: .seconds(60)) { try await Self.lastReset(b)?["outcome"] == "manual-done" }
            try await b.waitSynced("p")
            #expect(try await b.rows("p") == Self.serverState)
            let backup = try #require(try await Self.lastReset(b)?["backup_path"]?.stringValue)
            #expect(backup == pending["backup_path"]?.stringValue, "the backup path recorded when the reset started")
            let kept = try await ChildProcess.run("/usr/bin/sqlite3", [backup, "SELECT id FROM orders WHERE id IN ('b-new', 'while-pending') ORDER BY id"])
            #expect(kept.standardOutput == "b-new\nwhile-pending\n", "writes made while pending are in the backup")
        }
    }

    /// kill -9 while the before hook runs: the restart runs the hook again with the same reset
    /// id, keeps the backup path and completes the reset without losing the offline edits.
    @Test(arguments: [SIGKILL, SIGTERM])
    func stopWhileTheBeforeHookRunsResumesTheReset(signal: Int32) async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start()
            try await b.start()
            #expect(mkfifo(b.dir + "/gate", 0o600) == 0)
            try Cluster.write(ClusterAgent.config(dir: b.dir, url: cluster.url, partitions: ["p"], extra: try Self.installHooks(b, gate: true)), to: b.configPath)
            b.signal(SIGHUP)
            try await eventually("b reloaded") { b.log.contains("configuration reloaded") }
            try await Self.restoreWithOfflineEdits(cluster, a, b)
            let runs = b.dir + "/before.runs"
            try await eventually("before hook running", timeout: .seconds(60)) { FileManager.default.fileExists(atPath: runs) }
            let first = try #require(try await Self.lastReset(b))
            #expect(first["phase"] == "before-hook")
            // A crash (the daemon and, as systemd would, its hook) or a clean stop.
            await b.stop(signal)
            if signal == SIGKILL, let pid = Int32((try? String(contentsOfFile: b.dir + "/before.pid", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") {
                kill(pid, SIGKILL)
            }
            try await b.start()
            try await eventually("hook ran again", timeout: .seconds(60)) {
                ((try? String(contentsOfFile: runs, encoding: .utf8)) ?? "").split(separator: "\n").count == 2
            }
            let ids = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n")
            #expect(Set(ids).count == 1, "the same TETHER_RESET_ID: \(ids)")
            _ = try await ChildProcess.run("/bin/sh", ["-c", "echo go > \(b.dir)/gate"])
            try await eventually("reset done", timeout: .seconds(60)) { try await Self.lastReset(b)?["outcome"] == "recovered" }
            let done = try #require(try await Self.lastReset(b))
            #expect(done["id"] == first["id"])
            #expect(done["backup_path"] == first["backup_path"])
            try await b.waitSynced("p")
            #expect(try await b.rows("p") == "b-new|bee|9.0|-\nr1|one|11.0|-\nr4|FOUR|4.0|b note\n")
            #expect(try await b.sql("p", "PRAGMA integrity_check") == "ok\n")
        }
    }

    /// kill -9 at each phase of docs/contract.md "Reset steps" (the reset is pinned just before the phase's effect,
    /// after the phase was persisted): the restart resumes there and loses nothing.
    @Test(arguments: ["backing-up", "before-hook", "fetching", "rewriting", "after-hook"])
    func crashAtEveryPhaseResumesTheReset(phase: String) async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            let gates = cluster.dir.appending("gates")
            try FileManager.default.createDirectory(atPath: gates, withIntermediateDirectories: true)
            try await a.start()
            try Cluster.write(ClusterAgent.config(dir: b.dir, url: cluster.url, partitions: ["p"], extra: try Self.installHooks(b)), to: b.configPath)
            try await b.start(environment: ["TETHER_FAULT_RESET_GATE": gates])
            #expect(FileManager.default.createFile(atPath: gates + "/" + phase, contents: nil))
            try await Self.restoreWithOfflineEdits(cluster, a, b)
            try await eventually("reset reached \(phase)", timeout: .seconds(60)) {
                FileManager.default.fileExists(atPath: gates + "/" + phase + ".reached")
            }
            let before = try #require(try await Self.lastReset(b))
            #expect(before["phase"]?.stringValue == phase, "the phase is persisted before its effect")
            await b.stop(SIGKILL)
            try FileManager.default.removeItem(atPath: gates + "/" + phase)
            try await b.start(environment: ["TETHER_FAULT_RESET_GATE": gates])
            try await eventually("reset done", timeout: .seconds(60)) { try await Self.lastReset(b)?["outcome"] == "recovered" }
            let done = try #require(try await Self.lastReset(b))
            #expect(done["id"] == before["id"], "the same reset, resumed")
            #expect(done["backup_path"] == before["backup_path"], "the backup path is never forgotten")
            #expect(try await b.json(["resets"])["resets"]?.arrayValue?.count == 1, "no second reset")
            try await b.waitSynced("p")
            try await a.waitSynced("p")
            let expected = "b-new|bee|9.0|-\nr1|one|11.0|-\nr4|FOUR|4.0|b note\n"
            #expect(try await b.rows("p") == expected, "no unsynced change lost")
            #expect(try await a.rows("p") == expected)
            #expect(try await b.sql("p", "PRAGMA integrity_check") == "ok\n")
            let backup = try #require(done["backup_path"]?.stringValue)
            #expect(try await ChildProcess.run("/usr/bin/sqlite3", [backup, "PRAGMA integrity_check"]).standardOutput == "ok\n")
            if phase == "after-hook" || phase == "before-hook" {
                let event = phase == "after-hook" ? "after-reset" : "before-reset"
                #expect(Self.environment(b, event)["TETHER_RESET_ID"] == done["id"]?.stringValue, "the hook ran with the same id")
            }
        }
    }

    @Test func aPendingManualResetIsCarriedOutAtTheNextStart() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], extra: "[reset]\nmode = \"manual\"")
            try await a.start()
            try await b.start()
            try await Self.restoreWithOfflineEdits(cluster, a, b)
            try await eventually("b pending", timeout: .seconds(60)) { try await b.status("p")?["state"] == "reset-pending" }
            let stopped = await b.stop(SIGTERM)
            #expect(stopped?.status == 0)
            try await b.start()
            try await eventually("carried out at start", timeout: .seconds(60)) { try await Self.lastReset(b)?["outcome"] == "manual-done" }
            try await b.waitSynced("p")
            #expect(try await b.rows("p") == Self.serverState)
        }
    }

    @Test func terminatedSyncResetsKnownDevicesWith208() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'x', 1)")
            try await a.waitSynced("p")
            await a.stop()
            try await cluster.admin(["terminate-sync"])
            try await cluster.admin(["enable-sync"])
            try await a.start()
            try await eventually("reset", timeout: .seconds(60)) { try await Self.lastReset(a)?["error_code"] == 208 }
            try await eventually("done", timeout: .seconds(60)) { try await Self.lastReset(a)?["outcome"] == "recovered" }
            try await a.waitSynced("p")
        }
    }

    @Test func aBreakingSchemaChangeMakesTheResetManual() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'x', 1)")
            try await a.waitSynced("p")
            let breaking = Cluster.schema.replacingOccurrences(of: "version = 1", with: "version = 2")
                .replacingOccurrences(of: "total = \"real\"", with: "total = \"text\"")
            try Cluster.write(breaking, to: cluster.dir.appending("schema-v2.toml"))
            let output = try await cluster.admin(["schema", "apply", cluster.dir.appending("schema-v2.toml"), "--allow-breaking"])
            #expect(output.contains("breaking"))
            await a.stop()
            try await a.start()
            try await eventually("manual reset", timeout: .seconds(60)) { try await a.status("p")?["state"] == "reset-pending" }
            let reset = try #require(try await Self.lastReset(a))
            #expect([225, 235].contains(reset["error_code"]?.numberValue.map(Int.init) ?? 0))
            #expect(reset["fallback_reason"]?.stringValue?.contains("breaking") == true)
            #expect(try await a.rows("p") == "x|x|1.0|-\n", "the store stays readable and untouched while pending")
        }
    }

    @Test func recoveryOffTurnsTheRecoverModeIntoAManualReset() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start()
            try await b.start()
            try await cluster.admin(["recovery", "off"])
            try await Self.restoreWithOfflineEdits(cluster, a, b)
            try await eventually("b pending", timeout: .seconds(60)) { try await b.status("p")?["state"] == "reset-pending" }
            #expect(try await Self.lastReset(b)?["fallback_reason"] == "client recovery is disabled on the server")
        }
    }

    @Test func revokedAccessEmptiesTheStoreAfterABackupAndRecoversWhenGrantedBack() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'x', 1)")
            try await a.waitSynced("p")
            try await cluster.admin(["revoke", "device", "*"])
            try await eventually("delete-store pending", timeout: .seconds(60)) { try await Self.lastReset(a)?["error_code"] == 206 }
            #expect(try await Self.lastReset(a)?["outcome"] == "manual-pending")
            #expect(try await a.ctl(["reset", "initiate", "p"]).status == 0)
            try await eventually("deleted", timeout: .seconds(60)) { try await Self.lastReset(a)?["outcome"] == "deleted" }
            #expect(try await a.rows("p") == "")
            let backup = try #require(try await Self.lastReset(a)?["backup_path"]?.stringValue)
            #expect(try await ChildProcess.run("/usr/bin/sqlite3", [backup, "SELECT id FROM orders"]).standardOutput == "x\n")
            try await cluster.admin(["grant", "device", "*", "readwrite"])
            try await a.waitSynced("p", timeout: 120)
            #expect(try await a.rows("p") == "x|x|1.0|-\n", "the server's state comes back once access is granted")
        }
    }
}
