import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Bad inputs on the device (issue 9): a store file that is not SQLite or is corrupt is
/// quarantined and the partition bootstrapped again; a store whose schema an application
/// altered gets a manual reset; dropped capture triggers are recreated. Real processes.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct DamagedStoreEndToEndTests {
    /// Ways of damaging a store file while the agent is stopped.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        /// Not SQLite at all (SQLITE_NOTADB when opened).
        case notSQLite = "not-sqlite"
        /// A valid header, pages overwritten (SQLITE_CORRUPT or `PRAGMA quick_check` fails).
        case damagedPages = "damaged-pages"
        var testDescription: String { rawValue }

        func apply(to path: String) throws {
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            switch self {
            case .notSQLite:
                try Data(String(repeating: "this is not a database\n", count: 400).utf8).write(to: URL(fileURLWithPath: path))
            case .damagedPages:
                let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
                defer { try? handle.close() }
                let size = try handle.seekToEnd()
                // Keep page 1 (header and sqlite_master), scribble over everything after it.
                try handle.seek(toOffset: 4096)
                handle.write(Data(repeating: 0xA5, count: Int(size) - 4096))
            }
        }
    }

    /// A synced partition with 300 rows (several pages), the agent stopped.
    static func syncedThenStopped(_ cluster: Cluster, _ a: ClusterAgent) async throws -> String {
        try await a.start()
        try await a.waitSynced("p")
        let values = (1...300).map { "('r\($0)', 'customer \($0)', \($0))" }.joined(separator: ",")
        try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES \(values)")
        try await a.waitSynced("p")
        await a.stop()
        return try await a.sql("p", "SELECT count(*), sum(total) FROM orders")
    }

    static func quarantineRecords(_ agent: ClusterAgent) async throws -> [JSONValue] {
        try await agent.json(["resets"])["resets"]?.arrayValue?.filter { $0["quarantined"] == true } ?? []
    }

    @Test(arguments: Damage.allCases)
    func aDamagedStoreIsQuarantinedKeptAndBootstrappedFromTheServer(damage: Damage) async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let expected = try await Self.syncedThenStopped(cluster, a)
            try damage.apply(to: a.store("p"))
            let damaged = try Data(contentsOf: URL(fileURLWithPath: a.store("p")))
            try await a.start()
            let record = try await eventually("quarantine recorded", timeout: .seconds(60)) {
                try await Self.quarantineRecords(a).first { $0["outcome"] == "discarded" }
            }
            try await a.waitSynced("p", timeout: 90)
            #expect(try await a.sql("p", "SELECT count(*), sum(total) FROM orders") == expected, "bootstrapped from the server")
            #expect(try await a.sql("p", "PRAGMA integrity_check") == "ok\n")
            // The damaged file is kept, byte for byte, beside the reset backups, under a clear name.
            let id = try #require(record["id"]?.stringValue)
            let kept = try #require(record["backup_path"]?.stringValue)
            #expect(kept.hasPrefix(a.dir + "/state/recovery/p/"), "\(kept)")
            #expect(kept.hasSuffix("-quarantine-\(id).sqlite"), "\(kept)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == damaged)
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? Int)
            #expect(mode & 0o007 == 0, "no world access: \(String(mode, radix: 8))")
            #expect(record["error_code"] == 217)
            #expect(record["strategy"] == "discard")
            #expect(record["phase"] == "done")
            // Visible to operators: last_error, and one clear log line with the salvage hint.
            let status = try #require(try await a.status("p"))
            #expect(status["last_error"]?["code"] == 217)
            #expect(status["last_error"]?["message"]?.stringValue?.contains(kept) == true)
            #expect(a.log.contains("store \(a.store("p")) is damaged"))
            #expect(a.log.contains("sqlite3 \(kept) .recover"))
            #expect(a.log.contains("unsynced changes in it are not recovered automatically"))
            // Later writes sync as usual.
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('after', 'x', 1)")
            try await a.waitSynced("p")
            #expect(try await a.status("p")?["unsynced_changes"] == 0)
        }
    }

    /// A corruption error while running (applying a download; injected, since a real one
    /// depends on SQLite's page cache): the same quarantine, and the partition recovers.
    @Test func aCorruptionFoundWhileRunningQuarantinesTheStore() async throws {
        try await withCluster { cluster in
            let fault = cluster.dir.appending("corrupt-on-apply")
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start(environment: ["TETHER_FAULT_CORRUPT_ON_APPLY": fault])
            try await b.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('a1', 'x', 1)")
            try await a.waitSynced("p")
            #expect(FileManager.default.createFile(atPath: fault, contents: nil))
            try await b.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('b1', 'y', 2)")
            let record = try await eventually("quarantine recorded", timeout: .seconds(60)) {
                try await Self.quarantineRecords(a).first { $0["outcome"] == "discarded" }
            }
            #expect(record["quarantine_reason"]?.stringValue?.contains("SQLite error 11") == true, "\(record)")
            try await a.waitSynced("p", timeout: 90)
            try await b.waitSynced("p")
            #expect(try await a.rows("p") == "a1|x|1.0|-\nb1|y|2.0|-\n")
            let kept = try #require(record["backup_path"]?.stringValue)
            let saved = try await ChildProcess.run("/usr/bin/sqlite3", [kept, "SELECT id FROM orders ORDER BY id"])
            #expect(saved.standardOutput == "a1\n", "the quarantined store kept what it had: \(saved)")
        }
    }

    /// An application that opened the store path before the first bootstrap left an empty
    /// file there: the agent creates the store in it instead of refusing it.
    @Test func anEmptyFileAtTheStorePathBecomesTheStore() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try FileManager.default.createDirectory(atPath: a.dir + "/state/stores", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: a.store("p"), contents: nil))
            try await a.start()
            try await a.waitSynced("p", timeout: 60)
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('e1', 'x', 1)")
            try await a.waitSynced("p")
            #expect(try await Self.quarantineRecords(a).isEmpty, "nothing to quarantine")
        }
    }

    /// kill -9 between recording the quarantine and moving the file: the restart finds the
    /// original in place and finishes the same quarantine (no second record, nothing lost).
    @Test func killedDuringTheQuarantineFinishesItAtTheNextStart() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let expected = try await Self.syncedThenStopped(cluster, a)
            try Damage.notSQLite.apply(to: a.store("p"))
            let gates = cluster.dir.appending("gates")
            try FileManager.default.createDirectory(atPath: gates, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: gates + "/quarantining", contents: nil))
            try await a.start(environment: ["TETHER_FAULT_RESET_GATE": gates])
            try await eventually("quarantine pinned", timeout: .seconds(60)) {
                FileManager.default.fileExists(atPath: gates + "/quarantining.reached")
            }
            let pending = try #require(try await Self.quarantineRecords(a).first)
            #expect(pending["outcome"] == "in-progress", "recorded before the file moves")
            #expect(pending["phase"] == "quarantining")
            #expect(FileManager.default.fileExists(atPath: a.store("p")), "not moved yet")
            await a.stop(SIGKILL)
            try FileManager.default.removeItem(atPath: gates + "/quarantining")
            try await a.start(environment: ["TETHER_FAULT_RESET_GATE": gates])
            try await a.waitSynced("p", timeout: 90)
            let records = try await Self.quarantineRecords(a)
            #expect(records.count == 1, "the same quarantine, finished: \(records)")
            #expect(records.first?["id"] == pending["id"])
            #expect(records.first?["outcome"] == "discarded")
            let kept = try #require(records.first?["backup_path"]?.stringValue)
            #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: kept)), as: UTF8.self).hasPrefix("this is not a database"))
            #expect(try await a.sql("p", "SELECT count(*), sum(total) FROM orders") == expected)
        }
    }

    /// `ALTER TABLE` by an application while the agent runs: noticed at the next commit, a
    /// manual reset naming the column, the store still writable; `tetherctl reset initiate`
    /// backs it up and gives it back the server's schema and state.
    @Test func anApplicationAlteringTheSchemaGetsAManualReset() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try Cluster.write(
                ClusterAgent.config(dir: a.dir, url: cluster.url, partitions: ["p"], extra: try ClientResetEndToEndTests.installHooks(a)),
                to: a.configPath)
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1)")
            try await a.waitSynced("p")
            try await a.sql("p", "ALTER TABLE orders ADD COLUMN colour TEXT")
            try await a.sql("p", "INSERT INTO orders (id, customer, total, colour) VALUES ('r2', 'two', 2, 'red')")
            let record = try await eventually("manual reset recorded", timeout: .seconds(60)) {
                try await a.json(["resets"])["resets"]?.arrayValue?.first { $0["outcome"] == "manual-pending" }
            }
            #expect(record["strategy"] == "manual")
            #expect(record["error_code"] == 217)
            #expect(record["fallback_reason"]?.stringValue?.contains("column orders.colour") == true, "\(record)")
            #expect(a.log.contains("column orders.colour does not match the schema"))
            try await eventually("reset-pending", timeout: .seconds(30)) { try await a.status("p")?["state"] == "reset-pending" }
            try await eventually("manual hook ran", timeout: .seconds(30)) {
                ClientResetEndToEndTests.environment(a, "manual-reset")["TETHER_RESET_ID"] == record["id"]?.stringValue
            }
            // Readable and writable while it waits (docs/contract.md: Manual resets and delete-store).
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r3', 'three', 3)")
            #expect(try await a.ctl(["reset", "initiate", "p"]).status == 0)
            try await eventually("reset done", timeout: .seconds(60)) {
                try await a.json(["resets"])["resets"]?.arrayValue?.first { $0["id"] == record["id"] }?["outcome"] == "manual-done"
            }
            try await a.waitSynced("p", timeout: 60)
            #expect(try await a.sql("p", "SELECT name FROM pragma_table_info('orders') ORDER BY cid") == "id\ncustomer\nnote\ntotal\n", "no colour column")
            #expect(try await a.rows("p") == "r1|one|1.0|-\n", "the server's state")
            // The altered store, with the rows written after the alteration, is in the backup.
            let backup = try #require(record["backup_path"]?.stringValue)
            let saved = try await ChildProcess.run("/usr/bin/sqlite3", [backup, "SELECT id, colour FROM orders ORDER BY id"])
            #expect(saved.standardOutput == "r1|\nr2|red\nr3|\n", "\(saved)")
        }
    }

    /// A table dropped while the agent was stopped: found at start, same manual reset.
    @Test func aTableDroppedWhileStoppedIsFoundAtStart() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1)")
            try await a.waitSynced("p")
            await a.stop()
            try await a.sql("p", "DROP TABLE orders")
            try await a.start()
            try await eventually("reset-pending", timeout: .seconds(60)) { try await a.status("p")?["state"] == "reset-pending" }
            #expect(a.log.contains("table orders does not match the schema: the table is missing"))
            #expect(try await a.ctl(["reset", "initiate", "p"]).status == 0)
            try await a.waitSynced("p", timeout: 60)
            #expect(try await a.rows("p") == "r1|one|1.0|-\n")
        }
    }

    /// Capture triggers dropped by an application are recreated at start with a warning, and
    /// later writes sync again.
    @Test func droppedCaptureTriggersAreRecreatedWithAWarning() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            await a.stop()
            let triggers = try await a.sql("p", "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, 12) = '_tether_trg_' ORDER BY name")
            #expect(!triggers.isEmpty)
            for name in triggers.split(separator: "\n") { try await a.sql("p", "DROP TRIGGER \"\(name)\"") }
            try await a.start()
            try await a.waitSynced("p")
            #expect(a.log.contains("were recreated; application writes made while they were missing were not captured"))
            #expect(try await a.sql("p", "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, 12) = '_tether_trg_' ORDER BY name") == triggers)
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('t1', 'x', 1)")
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            #expect(try await b.rows("p") == "t1|x|1.0|-\n")
        }
    }
}
