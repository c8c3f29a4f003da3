import Foundation
import Glibc
import Testing
import TetherControl
import TetherTestSupport

/// Issue 35, part 1: a new device takes a partition's state as a ready file — a store file the
/// real `tether-server` built once (from rows the first time, from the previous file and the
/// history after that) — resumes a cut download, refuses a file that fails its checksum and
/// gets rows (a damaged compressed slice as well), and survives a `kill -9` in the middle of installing it. Real processes; the
/// application is `sqlite3`.
@Suite(.timeLimit(.minutes(6)))
struct ReadyFileEndToEndTests {
    /// Files for partitions of at least 100 rows, built when a bind asks (no background builds:
    /// these tests count on the first device after a write getting rows).
    static let readyFiles = "[ready_files]\nmin_rows = 100\nsettle_seconds = 0\n"
    /// The same, sent as the file's bytes (no compressed slices).
    static let uncompressed = "[ready_files]\nmin_rows = 100\nsettle_seconds = 0\ncompress = false\n"
    /// `/metrics` on the sync listener, for the tests to read.
    static let publicMetrics = "public_metrics = true"

    /// `instance`'s metrics exposition.
    static func metrics(_ cluster: Cluster, instance: Int = 0) throws -> String {
        let url = cluster.url(instance: instance)
        let port = UInt16(url.split(separator: ":").last?.prefix { $0.isNumber } ?? "") ?? 0
        return try HTTPGet.get(port: port, path: "/metrics").body
    }

    /// `tether_server_state_downloads_total{source}` of instance 0.
    static func stateDownloads(_ cluster: Cluster, source: String) throws -> Int {
        let prefix = "tether_server_state_downloads_total{source=\"\(source)\"} "
        let line = try metrics(cluster).split(separator: "\n").first { $0.hasPrefix(prefix) }
        return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    /// The ready files of partition `p` in `instance`'s cache, by version.
    static func files(_ cluster: Cluster, instance: Int = 0) -> [(version: Int64, path: String)] {
        let directory = cluster.serverDataDirectory(instance) + "/ready-files/p"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> (Int64, String)? in
            guard name.hasPrefix("v"), name.hasSuffix(".db"), let version = Int64(name.dropFirst().prefix { $0 != "-" }) else { return nil }
            return (version, directory + "/" + name)
        }.sorted { $0.0 < $1.0 }
    }

    /// Waits for a ready file of `p` newer than `version`; returns its version and path.
    static func waitForFile(_ cluster: Cluster, newerThan version: Int64 = 0, instance: Int = 0) async throws -> (version: Int64, path: String) {
        try await eventually("a ready file of p newer than version \(version)", timeout: .seconds(60)) { () -> (Int64, String)? in
            files(cluster, instance: instance).last.flatMap { $0.version > version ? $0 : nil }
        }
    }

    /// `count` rows in `p` written by `agent` as one statement, ids `<prefix><n>`; `wide` rows
    /// carry a 200-character customer (a file of several slices).
    static func fill(_ agent: ClusterAgent, _ count: Int, prefix: String, wide: Bool = false) async throws {
        let customer = wide ? "printf('%0200d', i)" : "'c'"
        _ = try await agent.sql(
            "p",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count)) INSERT INTO orders (id, customer, total) SELECT '\(prefix)' || i, \(customer), i FROM n")
        try await agent.waitSynced("p", timeout: 90)
    }

    /// Agent `a` with `count` synced rows, and agent `b` bootstrapped from rows: the first bind
    /// that asks for a file asks the server to build one.
    func withBuiltFile(
        _ settings: ClusterSettings = ClusterSettings(serverExtra: Self.publicMetrics, serverConfig: Self.readyFiles), rows count: Int = 3000, wide: Bool = false,
        _ body: (Cluster, ClusterAgent, (version: Int64, path: String)) async throws -> Void
    ) async throws {
        try await withCluster(settings) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await Self.fill(a, count, prefix: "o", wide: wide)
            let b = try cluster.agent("b", partitions: ["p"])
            try await b.start()
            try await b.waitSynced("p", timeout: 90)
            #expect(b.log.contains("bootstrapped at server version"), "b's state came as rows: no file was ready")
            let file = try await Self.waitForFile(cluster)
            try await body(cluster, a, file)
        }
    }

    @Test func aNewDeviceBootstrapsFromTheReadyFileAndSyncsOnFromItsVersion() async throws {
        try await withBuiltFile { cluster, a, file in
            try await eventually("the build logged", timeout: .seconds(10)) {
                cluster.serverProcess(instance: 0)?.standardError.contains("ready file built from rows") == true
            }
            // Written after the file's version: c gets them as downloads after the file.
            _ = try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('late-1', 'x', 1), ('late-2', 'y', 2)")
            try await a.waitSynced("p")
            let c = try cluster.agent("c", partitions: ["p"])
            try await c.start()
            try await c.waitSynced("p", timeout: 60)
            #expect(try await c.sql("p", "SELECT count(*) FROM orders") == "3002\n")
            #expect(try await c.rows("p") == a.rows("p"))
            // Its own identity, and its writes are captured and uploaded like any store's.
            let identity = try await c.sql("p", "SELECT client_file_id IS NOT NULL FROM _tether_meta")
            #expect(identity == "1\n")
            _ = try await c.sql("p", "UPDATE orders SET total = -1 WHERE id = 'o7'; INSERT INTO orders (id, customer, total) VALUES ('from-c', 'c', 3)")
            try await eventually("a has c's writes", timeout: .seconds(30)) {
                try await a.sql("p", "SELECT total FROM orders WHERE id = 'o7' UNION ALL SELECT count(*) FROM orders WHERE id = 'from-c'") == "-1.0\n1\n"
            }
            let metrics = try Self.metrics(cluster)
            #expect(metrics.contains("tether_server_state_downloads_total{source=\"file\"} 1"), "\(metrics)")
            #expect(Self.files(cluster).count == 1, "one file per partition: \(Self.files(cluster))")
            let newest = try #require(Self.files(cluster).last)
            #expect(FileManager.default.fileExists(atPath: String(newest.path.dropLast(3)) + ".slices"), "its slices compressed beside it")
            _ = file
        }
    }

    /// Issue 50: once a partition's writes settle the server builds its file without a bind
    /// asking, so the first new device after a bulk write gets the file; later writes a tenth
    /// of its rows bring it up to date in the background (from the history, not from rows).
    @Test func theFirstNewDeviceAfterABulkWriteGetsAFileBuiltInTheBackground() async throws {
        let settings = ClusterSettings(serverExtra: Self.publicMetrics, serverConfig: "[ready_files]\nmin_rows = 100\nsettle_seconds = 1\n")
        try await withCluster(settings) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await Self.fill(a, 3000, prefix: "o")
            let file = try await Self.waitForFile(cluster)
            let rowsBefore = try Self.stateDownloads(cluster, source: "rows")
            let b = try cluster.agent("b", partitions: ["p"])
            try await b.start()
            try await b.waitSynced("p", timeout: 90)
            #expect(try await b.rows("p") == a.rows("p"))
            #expect(try Self.stateDownloads(cluster, source: "file") == 1, "b took the file")
            #expect(try Self.stateDownloads(cluster, source: "rows") == rowsBefore, "b's state did not go as rows")
            try await Self.fill(a, 400, prefix: "late")
            let newer = try await Self.waitForFile(cluster, newerThan: file.version)
            // The file is in place before its build is logged.
            try await eventually("the update logged", timeout: .seconds(10)) {
                cluster.serverProcess(instance: 0)?.standardError.contains("ready file built from the previous file and") == true
            }
            let log = cluster.serverProcess(instance: 0)?.standardError ?? ""
            #expect(log.components(separatedBy: "ready file built from rows").count == 2, "built from rows once")
            #expect(newer.version > file.version)
        }
    }

    @Test func anOlderFileIsBroughtUpToDateFromTheHistoryNotRebuiltFromRows() async throws {
        try await withBuiltFile { cluster, a, first in
            try await Self.fill(a, 500, prefix: "n")
            // c takes the older file and the history after it; its bind asks for the file to be brought up to date.
            let c = try cluster.agent("c", partitions: ["p"])
            try await c.start()
            try await c.waitSynced("p", timeout: 60)
            let newer = try await Self.waitForFile(cluster, newerThan: first.version)
            try await eventually("brought up to date incrementally", timeout: .seconds(10)) {
                cluster.serverProcess(instance: 0)?.standardError.contains("ready file built from the previous file and") == true
            }
            let log = cluster.serverProcess(instance: 0)?.standardError ?? ""
            #expect(log.components(separatedBy: "ready file built from rows").count == 2, "built from rows once only")
            #expect(!FileManager.default.fileExists(atPath: first.path), "the older file is gone")
            let d = try cluster.agent("d", partitions: ["p"])
            try await d.start()
            try await d.waitSynced("p", timeout: 60)
            #expect(try await d.sql("p", "SELECT server_version FROM _tether_meta") == "\(newer.version)\n")
            #expect(try await d.rows("p") == a.rows("p"))
            #expect(try await c.rows("p") == a.rows("p"))
        }
    }

    @Test func aCutDownloadResumesWhereItStopped() async throws {
        let gate = try TemporaryDirectory(prefix: "tether-hold")
        defer { gate.remove() }
        let hold = gate.appending("hold-state")
        let settings = ClusterSettings(serverExtra: Self.publicMetrics, serverConfig: Self.readyFiles, serverEnvironment: ["TETHER_FAULT_HOLD_STATE_FILE": hold])
        try await withBuiltFile(settings, rows: 20_000, wide: true) { cluster, a, file in
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
            #expect(size > 3 << 20, "a file of several 1 MiB slices (\(size) bytes)")
            _ = FileManager.default.createFile(atPath: hold, contents: nil)
            let c = try cluster.agent("c", partitions: ["p"])
            try await c.start()
            let part = c.dir + "/state/staging/p-bootstrap.sqlite.ready"
            let held = try await eventually("the first slice written", timeout: .seconds(30)) { () -> Int? in
                let bytes = (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0
                return bytes > 0 ? bytes : nil
            }
            await c.stop(SIGKILL)
            #expect(!FileManager.default.fileExists(atPath: c.store("p")), "no store until the file is whole")
            try FileManager.default.removeItem(atPath: hold)
            try await c.start()
            try await c.waitSynced("p", timeout: 60)
            #expect(
                cluster.serverProcess(instance: 0)?.standardError.contains("offset=\(held)") == true,
                "the server resumed at the \(held) bytes c held")
            #expect(try await c.rows("p") == a.rows("p"))
            #expect(!FileManager.default.fileExists(atPath: part))
        }
    }

    /// Sent as it is (`compress = false`): a damaged byte reaches the device.
    @Test func aFileThatFailsItsChecksumIsRefusedAndTheDeviceGetsRows() async throws {
        try await withBuiltFile(ClusterSettings(serverExtra: Self.publicMetrics, serverConfig: Self.uncompressed)) { cluster, a, file in
            #expect(!FileManager.default.fileExists(atPath: String(file.path.dropLast(3)) + ".slices"))
            // Bit rot in the server's copy: same size, other bytes.
            let handle = try #require(FileHandle(forUpdatingAtPath: file.path))
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: size / 2)
            try handle.write(contentsOf: Data(repeating: 0x5a, count: 64))
            try handle.close()
            let c = try cluster.agent("c", partitions: ["p"])
            try await c.start()
            try await c.waitSynced("p", timeout: 90)
            #expect(c.log.contains("does not match its SHA-256"), "c refused the file")
            #expect(try await c.rows("p") == a.rows("p"))
            try await eventually("the server dropped and rebuilt its file", timeout: .seconds(60)) {
                (cluster.serverProcess(instance: 0)?.standardError ?? "").components(separatedBy: "ready file built from rows").count == 3
            }
            #expect(cluster.serverProcess(instance: 0)?.standardError.contains("does not match its digest") == true)
        }
    }

    /// A compressed slice damaged on the server's disk does not inflate on the device: refused as
    /// a checksum mismatch, rows this time; the server finds its slices do not match the file and
    /// writes them again, and the next device takes the file.
    @Test func damagedCompressedSlicesAreRefusedAndWrittenAgain() async throws {
        try await withBuiltFile { cluster, a, file in
            let slices = String(file.path.dropLast(3)) + ".slices"
            let handle = try #require(FileHandle(forUpdatingAtPath: slices))
            try handle.seek(toOffset: 100)
            try handle.write(contentsOf: Data(repeating: 0x5a, count: 64))
            try handle.close()
            let c = try cluster.agent("c", partitions: ["p"])
            try await c.start()
            try await c.waitSynced("p", timeout: 90)
            #expect(c.log.contains("a compressed slice of the ready file of p (at byte 0) is damaged"), "c refused the file")
            #expect(try await c.rows("p") == a.rows("p"))
            try await eventually("the server wrote its slices again", timeout: .seconds(60)) {
                cluster.serverProcess(instance: 0)?.standardError.contains("compressed slices did not match it; written again") == true
            }
            let d = try cluster.agent("d", partitions: ["p"])
            try await d.start()
            try await d.waitSynced("p", timeout: 60)
            #expect(try await d.rows("p") == a.rows("p"))
            #expect(!d.log.contains("does not match its SHA-256"))
            // c's download counts (it was served the file, and refused it), then d's.
            #expect(try Self.metrics(cluster).contains("tether_server_state_downloads_total{source=\"file\"} 2"), "d took the file")
        }
    }

    @Test func anAgentKilledMidInstallLeavesNoStoreAndFinishesAtTheNextStart() async throws {
        try await withBuiltFile { cluster, a, _ in
            let gates = try TemporaryDirectory(prefix: "tether-gates")
            defer { gates.remove() }
            _ = FileManager.default.createFile(atPath: gates.appending("ready-file-installed"), contents: nil)
            let c = try cluster.agent("c", partitions: ["p"])
            try await c.start(environment: ["TETHER_FAULT_RESET_GATE": gates.path])
            try await eventually("c holds the installed file", timeout: .seconds(30)) {
                FileManager.default.fileExists(atPath: gates.appending("ready-file-installed.reached"))
            }
            await c.stop(SIGKILL)
            #expect(!FileManager.default.fileExists(atPath: c.store("p")), "nothing at the store's path")
            try await c.start()
            try await c.waitSynced("p", timeout: 60)
            #expect(try await c.rows("p") == a.rows("p"))
        }
    }

    /// After a restore, resets take the server's state as the ready file too (reset step 4).
    @Test func aResetAfterARestoreTakesTheReadyFile() async throws {
        try await withBuiltFile { cluster, a, file in
            let snapshot = try await cluster.admin(["snapshot", "p"])
            let atSnapshot = try await a.rows("p")
            try await Self.fill(a, 200, prefix: "after")
            try await cluster.admin(["restore", "p", snapshot, "--rollback"])
            try await eventually("a reset", timeout: .seconds(60)) {
                try await a.json(["resets"])["resets"]?.arrayValue?.last?["outcome"]?.stringValue == "recovered"
            }
            try await a.waitSynced("p", timeout: 60)
            #expect(try await a.rows("p") == atSnapshot, "rolled back to the snapshot")
            let metrics = try Self.metrics(cluster)
            #expect(metrics.contains("tether_server_state_downloads_total{source=\"file\"} "), "\(metrics)")
            #expect(!metrics.contains("tether_server_state_downloads_total{source=\"file\"} 0"), "the reset took the file at version \(file.version)")
        }
    }

    /// A reset served a file older than the head recovers against the server's state at the bind,
    /// not the file's: a row the device inserted (synced) after the file's version, then updated
    /// offline, keeps the update; a row it deleted offline stays deleted. (Soak seed 364088674:
    /// recovering against the stale file dropped such updates and deletes by rule 2 — "a row
    /// the server lacks" — and the downloads after the file brought the old values back.)
    @Test func aResetServedAnOlderFileRecoversAgainstTheStateAtItsBind() async throws {
        try await withBuiltFile { cluster, a, file in
            _ = try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'x', 1)")
            try await a.waitSynced("p")
            try await a.ctl(["pause", "p"])
            _ = try await a.sql("p", "UPDATE orders SET total = 7 WHERE id = 'x'; DELETE FROM orders WHERE id = 'o5'")
            try await cluster.admin(["terminate-sync"])
            try await cluster.admin(["enable-sync"])
            try await a.ctl(["resume", "p"])
            try await eventually("a reset with 208", timeout: .seconds(60)) {
                try await a.json(["resets"])["resets"]?.arrayValue?.last?["outcome"]?.stringValue == "recovered"
            }
            try await a.waitSynced("p", timeout: 60)
            #expect(Self.files(cluster).first?.version ?? 0 >= file.version)
            #expect(try await a.sql("p", "SELECT total FROM orders WHERE id = 'x' UNION ALL SELECT count(*) FROM orders WHERE id = 'o5'") == "7.0\n0\n")
            let c = try cluster.agent("c", partitions: ["p"])
            try await c.start()
            try await c.waitSynced("p", timeout: 60)
            #expect(try await c.rows("p") == a.rows("p"), "the server holds a's offline update and delete")
            let metrics = try Self.metrics(cluster)
            #expect(!metrics.contains("tether_server_state_downloads_total{source=\"file\"} 0"), "the reset took the file")
        }
    }

    /// Two instances on PostgreSQL: each builds and serves its own file.
    @Test func twoInstancesOnPostgreSQLEachServeAReadyFile() async throws {
        try await withCluster(ClusterSettings(serverExtra: Self.publicMetrics, serverConfig: Self.readyFiles, storage: .postgresql, instances: 2)) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await Self.fill(a, 3000, prefix: "o")
            for instance in 0...1 {
                let first = try cluster.agent("first-\(instance)", partitions: ["p"], url: cluster.url(instance: instance))
                try await first.start()
                try await first.waitSynced("p", timeout: 60)
                _ = try await Self.waitForFile(cluster, instance: instance)
                let second = try cluster.agent("second-\(instance)", partitions: ["p"], url: cluster.url(instance: instance))
                try await second.start()
                try await second.waitSynced("p", timeout: 60)
                #expect(try await second.rows("p") == a.rows("p"))
                let metrics = try Self.metrics(cluster, instance: instance)
                #expect(metrics.contains("tether_server_state_downloads_total{source=\"file\"} 1"), "instance \(instance): \(metrics)")
            }
        }
    }
}
