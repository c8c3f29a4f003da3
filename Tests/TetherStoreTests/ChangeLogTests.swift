import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

@Suite struct ChangeLogTests {
    @Test func readsPendingChangesInBatchesWithTheirSeqRange() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, """
            INSERT INTO items VALUES (1, 'a', NULL);
            UPDATE items SET name = 'b' WHERE sku = 1;
            UPDATE items SET price = 2 WHERE sku = 1;
            INSERT INTO items VALUES (2, 'c', NULL);
            DELETE FROM items WHERE sku = 2;
            """)
        let first = try #require(try await store.pendingChanges(after: 0, limit: 3))
        #expect(first.lastSeq - first.firstSeq == 2)
        // Collapsed: insert+update+update → one insert with the latest fields.
        #expect(first.changeset.changes == [.insert("items", .integer(1), ["name": .text("b"), "price": .real(2)])])
        let second = try #require(try await store.pendingChanges(after: first.lastSeq, limit: 3))
        #expect(second.firstSeq == first.lastSeq + 1)
        #expect(second.changeset.changes == [.delete("items", .integer(2))])
        #expect(try await store.pendingChanges(after: second.lastSeq) == nil)

        // Acknowledging drops what the server integrated, and records it.
        #expect(try await store.acknowledge(throughSeq: first.lastSeq) == 3)
        #expect(try await store.pendingChangeCount() == 2)
        #expect(try await store.metadata().integratedSeq == first.lastSeq)
        #expect(try await store.pendingChanges(after: 0)?.firstSeq == second.firstSeq)
        try store.close()
    }

    @Test func seqsAreNeverReusedAfterTrimming() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'a', NULL)")
        let last = try await store.lastAssignedSeq()
        try await store.acknowledge(throughSeq: last)
        try store.close()
        let reopened = try await makeStore(dir)
        try await sqlite3(reopened.path, "INSERT INTO items VALUES (2, 'b', NULL)")
        #expect(try await reopened.allPendingChanges().map(\.seq) == [last + 1])
        try reopened.close()
    }

    @Test func collapsesAWeekOfOfflineChangesToTheirNetEffect() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let app = try appConnection(store.path)
        try await app.write { db in
            for sku in 1...20 {
                try db.execute(sql: "INSERT INTO items (sku, name) VALUES (?, 'new')", arguments: [sku])
            }
        }
        // Pretend the first 20 inserts were uploaded already: they must not move.
        let uploaded = try await store.lastAssignedSeq()
        for round in 1...50 {
            try await app.write { db in
                try db.execute(sql: "UPDATE items SET price = ? WHERE sku <= 10", arguments: [Double(round)])
                try db.execute(sql: "UPDATE items SET name = ? WHERE sku = 11", arguments: ["r\(round)"])
            }
        }
        try await app.write { db in
            try db.execute(sql: "DELETE FROM items WHERE sku = 12")
            try db.execute(sql: "INSERT INTO items (sku, name) VALUES (99, 'x')")
            try db.execute(sql: "UPDATE items SET name = 'y' WHERE sku = 99")
        }
        let before = try await store.pendingChanges(after: uploaded, limit: 100_000)
        let removed = try await store.collapsePendingChanges(after: uploaded)
        #expect(removed == 50 * 11 + 3 - 13)
        #expect(try await store.pendingChangeCount() == 20 + 13)
        let after = try #require(try await store.pendingChanges(after: uploaded, limit: 100_000))
        #expect(Set(after.changeset.changes) == Set(try #require(before).changeset.changes))
        #expect(after.changeset.changes.contains(.insert("items", .integer(99), ["name": .text("y"), "price": .null])))
        #expect(after.changeset.changes.contains(.update("items", .integer(11), ["name": .text("r50")])))
        #expect(after.changeset.changes.contains(.update("items", .integer(3), ["price": .real(50)])))
        // The uploaded inserts are untouched.
        #expect(try await sqlite3(store.path, "SELECT count(*), min(kind), max(kind) FROM _tether_log WHERE seq <= \(uploaded)").stdout == "20|insert|insert\n")
        // Read for upload, the insert of 12 (deleted since, that delete follows) says nothing.
        let first = try #require(try await store.pendingChanges(after: 0, limit: 20))
        #expect(first.lastSeq == uploaded && first.changeset.count == 19)
        // Collapsing again finds nothing.
        #expect(try await store.collapsePendingChanges(after: uploaded) == 0)
        try app.close()
        try store.close()
    }

    /// Upload batches are cut by size: rows of 200 KiB photos go three to a batch (about 512 KiB
    /// of values), short rows by the entry limit; every seq is in exactly one batch.
    @Test func uploadBatchesAreCutBySize() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        let app = try appConnection(store.path)
        defer { try? app.close() }
        try await app.write { db in
            for i in 1...10 {
                try db.execute(
                    sql: "INSERT INTO orders (id, customer, total, qty, paid, photo) VALUES (?, 'c', 1.0, 1, 0, zeroblob(204800))",
                    arguments: ["o\(i)"])
            }
            for sku in 1...30 { try db.execute(sql: "INSERT INTO items (sku, name) VALUES (?, 'x')", arguments: [sku]) }
        }
        var batches: [UploadChangeset] = []
        var after: Int64 = 0
        while let batch = try await store.pendingChanges(after: after, limit: 20) {
            #expect(batch.afterSeq == after && batch.firstSeq == after + 1)
            batches.append(batch)
            after = batch.lastSeq
        }
        #expect(batches.map(\.changeset.count) == [3, 3, 3, 1 + 19, 11])
        #expect(after == 40)
        // A batch always holds at least one change, however large.
        #expect(try await store.pendingChanges(after: 0, maxBytes: 1)?.changeset.count == 1)
    }

    @Test func readsThePendingChangesOfABackupFile() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'a', NULL)")
        try store.close()
        let changes = try PartitionStore.pendingChanges(ofStoreAt: dir.appending("store.sqlite"))
        #expect(changes.map(\.change) == [.insert("items", .integer(1), ["name": .text("a"), "price": .null])])
        #expect(throws: StoreError.self) { try PartitionStore.pendingChanges(ofStoreAt: dir.appending("missing.sqlite")) }
    }
}
