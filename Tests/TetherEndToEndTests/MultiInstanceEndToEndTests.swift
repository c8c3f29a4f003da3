import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Two `tether-server` instances sharing a real PostgreSQL (started by the test), real
/// `tetherd` agents on different instances, applications played by `sqlite3`.
@Suite struct MultiInstanceEndToEndTests {
    @Test func agentsOnTwoInstancesConvergeAndARestoreOnOneResetsAgentsOnTheOther() async throws {
        // Two instances on one database of a PostgreSQL the cluster starts; agent b uses the second.
        try await withCluster(ClusterSettings(storage: .postgresql, instances: 2)) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], url: cluster.url(instance: 1))
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")

            // Writes on either side reach the other through the other instance.
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1), ('r2', 'two', 2)")
            try await eventually("b has a's rows", timeout: .seconds(30)) { try await b.rows("p").contains("r2|two") }
            try await b.sql("p", "UPDATE orders SET total = 20 WHERE id = 'r2'; INSERT INTO orders (id, customer, total) VALUES ('r3', 'three', 3)")
            try await eventually("a has b's rows", timeout: .seconds(30)) { try await a.rows("p").contains("r3|three") }
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            #expect(try await a.rows("p") == b.rows("p"))
            let atSnapshot = try await a.rows("p")

            // A snapshot and a restore through instance one; B, on instance two, synced past it and resets.
            let snapshot = try await cluster.admin(["snapshot", "p"])
            try await b.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r4', 'four', 4)")
            try await b.waitSynced("p")
            try await eventually("a has r4", timeout: .seconds(30)) { try await a.rows("p").contains("r4|four") }
            try await cluster.admin(["restore", "p", snapshot, "--rollback"])
            try await eventually("b reset", timeout: .seconds(60)) {
                try await b.json(["resets"])["resets"]?.arrayValue?.last?["outcome"]?.stringValue == "recovered"
            }
            try await eventually("a reset", timeout: .seconds(60)) {
                try await a.json(["resets"])["resets"]?.arrayValue?.last?["outcome"]?.stringValue == "recovered"
            }
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            // r4 was synced before the snapshot was restored: it is gone everywhere, the rest is the snapshot.
            #expect(try await a.rows("p") == atSnapshot)
            #expect(try await b.rows("p") == atSnapshot)
            _ = await a.stop()
            _ = await b.stop()
        }
    }
}
