import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// What must not be taken for a restored or cloned device (issue "A device restored from an
/// older disk image, or cloned from a golden image, silently loses writes", item 4), and a store
/// file that belongs to another partition.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct StoreLineageGuardEndToEndTests {
    typealias Lineage = StoreLineageEndToEndTests

    /// No false positives: restarts, SIGKILL between the server integrating an upload and the
    /// agent hearing the acknowledgement (the server holds every download meanwhile), and a
    /// lost acknowledgement followed by a reconnect — no reset, every write synced once.
    @Test func killsAndLostAcknowledgementsAreNotTakenForARegressedStore() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-lineage")
        defer { dir.remove() }
        let hold = dir.appending("hold")
        try await withCluster(ClusterSettings(serverEnvironment: ["TETHER_FAULT_HOLD_DOWNLOADS_FILE": hold])) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            for round in 1...3 {
                #expect(FileManager.default.createFile(atPath: hold, contents: nil))
                try await Lineage.insert(a, (1...50).map { "k\(round)-\($0)" })
                // Integrated by the server, not acknowledged to the agent.
                try await eventually("round \(round) integrated", timeout: .seconds(30)) {
                    let text = try await cluster.admin(["status", "--json"])
                    let status = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
                    return status["partitions"]?.arrayValue?.first?["rows"]?.numberValue == Double(round * 50)
                }
                await a.stop(round == 2 ? SIGTERM : SIGKILL)
                try? FileManager.default.removeItem(atPath: hold)
                try await a.start()
                try await a.waitSynced("p")
            }
            // A restart with nothing pending.
            await a.stop()
            try await a.start()
            try await Lineage.insert(a, ["last"])
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            #expect(try await a.resets().isEmpty)
            #expect(try await b.resets().isEmpty)
            let rows = try await Lineage.ids(b), rowsA = try await Lineage.ids(a)
            #expect(rows.count == 151 && rows == rowsA)
            #expect(!a.log.contains("store regressed") && !a.log.contains("another device"))
        }
    }

    /// No false positives after a reset's own rewrite: a server restored to a snapshot is 211
    /// and stays 211 (no cause), and the store the reset produced then survives kills,
    /// restarts and writes without a 209 or 210.
    @Test func aResetStoreIsNotTakenForARegressedOne() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await Lineage.insert(a, ["r1"])
            try await a.waitSynced("p")
            let snapshot = try await cluster.admin(["snapshot", "p"])
            try await Lineage.insert(a, ["r2"])
            try await a.waitSynced("p")
            try await cluster.admin(["restore", "p", snapshot])
            let reset = try await Lineage.resetDone(a)
            #expect(reset["error_code"] == 211)
            #expect(reset["cause"] == .null)
            for (round, signal) in [SIGKILL, SIGTERM, SIGKILL].enumerated() {
                try await Lineage.insert(a, ["w\(round)"])
                await a.stop(signal)
                try await a.start()
                try await a.waitSynced("p")
            }
            #expect(try await a.resets().count == 1)
            #expect(!a.log.contains("store regressed") && !a.log.contains("another device"))
        }
    }

    /// A store file of another partition put in place is refused, naming both, and never
    /// synced as the other: the partition stops, the other partition's server data is untouched.
    @Test func aStoreFileOfAnotherPartitionIsRefused() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p", "q"])
            let b = try cluster.agent("b", partitions: ["q"])
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            try await a.waitSynced("q")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('in-p', 'a', 1)")
            try await a.sql("q", "INSERT INTO orders (id, customer, total) VALUES ('in-q', 'a', 1)")
            try await a.waitSynced("p")
            try await a.waitSynced("q")
            await a.stop()
            try Lineage.copyDatabase(a.store("q"), to: a.dir + "/q-own.sqlite")
            try Lineage.copyDatabase(a.store("p"), to: a.store("q"))
            try await a.start()
            let status = try await eventually("q stopped", timeout: .seconds(30)) { () -> JSONValue? in
                let status = try await a.status("q")
                return status?["state"] == "stopped" ? status : nil
            }
            let message = status["last_error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("belongs to partition p, not q"), "\(message)")
            try await a.waitSynced("p")
            try await b.waitSynced("q")
            #expect(try await b.sql("q", "SELECT id FROM orders ORDER BY id") == "in-q\n")
            // Its own file back and a reload: q syncs again.
            await a.stop()
            try Lineage.copyDatabase(a.dir + "/q-own.sqlite", to: a.store("q"))
            try await a.start()
            try await a.waitSynced("q")
            #expect(try await a.resets().isEmpty)
        }
    }
}
