import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Issue 14: a bootstrap's and a reset's download show in `tetherctl status` (rows, bytes,
/// totals, a rate) and in `tetherctl wait-synced --progress` while they run. While a test
/// holds it (a test-only fault), the server sends a state download's first chunk and keeps the
/// others back, so the download is under way for exactly as long as the test watches it.
@Suite(.timeLimit(.minutes(5)))
struct DownloadProgressEndToEndTests {
    /// `TETHER_FAULT_HOLD_STATE_FILE`: state downloads stop after their first chunk while held.
    struct StateHold {
        let path: String
        func hold() { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        func release() { try? FileManager.default.removeItem(atPath: path) }  // absent: released already
    }

    /// A cluster whose server can hold state downloads, and agent `a` with 6,000 synced rows in
    /// partition `p` (three state chunks of at most 2,048 rows).
    func withSyncedRows(_ body: (Cluster, ClusterAgent, StateHold) async throws -> Void) async throws {
        let gate = try TemporaryDirectory(prefix: "tether-hold")
        defer { gate.remove() }
        let hold = StateHold(path: gate.appending("hold-state"))
        try await withCluster(ClusterSettings(serverEnvironment: ["TETHER_FAULT_HOLD_STATE_FILE": hold.path])) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            _ = try await a.sql("p", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000) INSERT INTO orders (id, customer, total) SELECT 'o' || i, 'c', i FROM n")
            try await a.waitSynced("p", timeout: 60)
            defer { hold.release() }
            try await body(cluster, a, hold)
        }
    }

    @Test func aBootstrapShowsItsProgressInStatusAndWaitSynced() async throws {
        try await withSyncedRows { cluster, a, hold in
            hold.hold()
            let b = try cluster.agent("b", partitions: ["p"])
            try await b.start()
            let waiting = try ChildProcess.start(
                try BuiltProducts.executable("tetherctl"), ["--socket", b.socket, "wait-synced", "--progress", "--timeout", "60", "p"])
            let download = try await eventually("the bootstrap's download in status", timeout: .seconds(30)) { () -> JSONValue? in
                guard let status = try await b.status("p"), let download = status["download"], download != .null else { return nil }
                return download
            }
            #expect(download["rows_total"]?.numberValue == 6000)
            #expect((download["bytes_total"]?.numberValue ?? 0) > 0)
            #expect(download["started_at"]?.stringValue != nil)
            #expect(await waiting.waitForOutput("p: bootstrapping: "), "wait-synced --progress shows the download under way")
            hold.release()
            let result = await waiting.wait(timeout: .seconds(90))
            #expect(result.status == 0, "\(result)")
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.contains { $0.hasPrefix("p: bootstrapping: ") && $0.contains(" of 6,000 rows (") }, "\(lines)")
            #expect(lines.last?.hasPrefix("p synced at server version") == true, "\(lines)")
            #expect(try await b.sql("p", "SELECT count(*) FROM orders") == "6000\n")
            // The same download as events: started, further tenths, finished whole.
            let events = try await b.events("download")
            #expect(events.first?["phase"] == "started", "\(events)")
            #expect(events.last?["phase"] == "finished" && events.last?["outcome"] == "complete" && events.last?["rows"]?.numberValue == 6000)
            #expect(events.filter { $0["phase"] == "progress" }.count >= 1, "three chunks: at least one further tenth")
        }
    }

    /// The write-once bootstrap killed mid-download (SIGKILL after some chunks are in the
    /// staging store): there is no store at the store's path — nothing an application could
    /// mistake for a complete store — and the next start downloads it whole.
    @Test func aBootstrapKilledMidDownloadLeavesNoStoreAndFinishesAtTheNextStart() async throws {
        try await withSyncedRows { cluster, a, hold in
            hold.hold()
            let b = try cluster.agent("b", partitions: ["p"])
            try await b.start()
            let staging = b.dir + "/state/staging/p-bootstrap.sqlite"
            _ = try await eventually("some rows of the bootstrap staged", timeout: .seconds(30)) { () -> Bool? in
                guard let done = try await b.status("p")?["download"]?["rows_done"]?.numberValue, done > 0 else { return nil }
                return true
            }
            await b.stop(SIGKILL)
            #expect(FileManager.default.fileExists(atPath: staging), "the partial download is in the staging store")
            #expect(!FileManager.default.fileExists(atPath: b.store("p")), "no store at the store's path")
            hold.release()
            try await b.start()
            try await b.waitSynced("p", timeout: 60)
            #expect(try await b.sql("p", "SELECT count(*) FROM orders") == "6000\n")
            #expect(!FileManager.default.fileExists(atPath: staging), "the staging name is gone once installed")
        }
    }

    @Test func aResetShowsItsDownloadInStatus() async throws {
        try await withSyncedRows { cluster, a, hold in
            let snapshot = try await cluster.admin(["snapshot", "p"])
            _ = try await a.sql("p", "UPDATE orders SET total = 0 WHERE id = 'o1'")
            try await a.waitSynced("p")
            hold.hold()
            try await cluster.admin(["restore", "p", snapshot])
            let status = try await eventually("the reset's download in status", timeout: .seconds(30)) { () -> JSONValue? in
                guard let status = try await a.status("p"), status["state"] == "resetting", status["download"] != .null else { return nil }
                return status
            }
            #expect(status["download"]?["rows_total"]?.numberValue == 6000)
            hold.release()
            try await a.waitSynced("p", timeout: 60)
            #expect(try await a.status("p")?["download"] == .null, "no download left once synced")
        }
    }

    /// `wait-synced` right after an application's commit covers that commit: it counts from the
    /// store, not from a status the commit's notification has not reached yet (it used to
    /// answer at once, before the upload).
    @Test func waitSyncedRightAfterACommitCoversIt() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            for round in 1...3 {
                _ = try await a.sql("p", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO orders (id, customer, total) SELECT 'r\(round)-' || i, 'c', i FROM n")
                try await a.waitSynced("p", timeout: 60)
                #expect(try await a.sql("p", "SELECT count(*) FROM _tether_log") == "0\n", "round \(round): nothing left unacknowledged")
            }
        }
    }
}
