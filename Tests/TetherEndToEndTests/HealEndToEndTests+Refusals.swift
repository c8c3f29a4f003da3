import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Healing when a device's offer is refused before the server can answer it.
extension HealEndToEndTests {
    /// Access revoked while a device sends its view after `restore --heal` (granted again before
    /// it binds): the heal session is refused with 206 and the reset goes on without healing.
    /// Its changes of rows the restored server lacks — a delete and an update made offline —
    /// are kept, not dropped by recovery rule 2: the other device's view brings those rows back
    /// afterwards, and the first device's changes, made after the restore, win over it (soak
    /// seed 961973229: the refused reset dropped 21 such changes, which later views undid).
    @Test func aHealRefusedWhenAccessIsRevokedKeepsTheChangesOfRowsTheServerLacks() async throws {
        try await withCluster { cluster in
            // a's after_hook waits until access is granted again, so that a binds with access.
            let (hook, granted) = try cluster.gateHook("wait-for-grant")
            let a = try cluster.agent("a", partitions: ["p"], extra: "[reset]\nafter_hook = \"\(hook)\"")
            let b = try cluster.agent("b", partitions: ["p"])
            for agent in [a, b] { try await agent.start() }
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r0', 'zero', 0)")
            for agent in [a, b] { try await agent.waitSynced("p") }
            let snapshot = try await cluster.admin(["snapshot", "p"])
            try await a.sql("p", """
                INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1);
                INSERT INTO orders (id, customer, total) VALUES ('r2', 'two', 2);
                INSERT INTO orders (id, customer, total) VALUES ('r3', 'three', 3)
                """)
            try await a.waitSynced("p")
            try await eventually("b has the window", timeout: .seconds(30)) { try await b.rows("p").contains("r3|three") }
            try await b.waitSynced("p")
            for agent in [a, b] { try await agent.ctl(["pause", "p"]) }
            try await a.sql("p", "DELETE FROM orders WHERE id = 'r1'; UPDATE orders SET note = 'a offline' WHERE id = 'r2'")
            let restored = try await cluster.admin(["restore", "p", snapshot, "--heal"])
            #expect(restored.contains("give them back"), "\(restored)")

            // a sends its view a row per chunk and holds after the first; access is revoked.
            let hold = a.dir + "/hold-heal"
            try Cluster.write("", to: hold)
            _ = await a.stop()
            try await a.start(environment: ["TETHER_FAULT_HEAL_CHUNK_ROWS": "1", "TETHER_FAULT_HOLD_HEAL_FILE": hold])
            try await a.ctl(["resume", "p"])
            try await eventually("a holds inside its contribution", timeout: .seconds(60)) {
                a.log.contains("holding the heal contribution")
            }
            try await cluster.admin(["revoke", "device", "*"])
            try FileManager.default.removeItem(atPath: hold)
            try await eventually("a's offer refused", timeout: .seconds(60)) {
                a.log.contains("the store's view is not offered for healing: the server refused it")
            }
            try await cluster.admin(["grant", "device", "*", "readwrite"])
            try Cluster.write("", to: granted)
            try await eventually("a's reset done", timeout: .seconds(60)) { try await a.resets().last?["phase"] == "done" }
            let reset = try #require(try await a.resets().last)
            #expect(reset["healed_changes"]?.numberValue == 0 && reset["dropped_changes"]?.numberValue == 0, "\(reset)")
            try await a.waitSynced("p", timeout: 60)

            // b's view brings the window back; a's delete and update, made after, win.
            try await b.ctl(["resume", "p"])
            try await eventually("b's reset done", timeout: .seconds(90)) { try await b.resets().last?["phase"] == "done" }
            for agent in [b, a] { try await agent.waitSynced("p", timeout: 60) }
            let expected = "r0|zero|0.0|-\nr2|two|2.0|a offline\nr3|three|3.0|-\n"
            try await eventually("both hold the healed window with a's changes", timeout: .seconds(30)) {
                let (rowsA, rowsB) = (try await a.rows("p"), try await b.rows("p"))
                return rowsA == expected && rowsB == expected
            }
            try await Self.expect([a, b], hold: expected)
        }
    }
}
