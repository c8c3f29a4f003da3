import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

func serverEntry(_ version: Int64, integrated: Int64 = 0, _ changes: [RowChange] = []) -> DownloadEntry {
    DownloadEntry(
        serverVersion: ServerVersion(version: version, salt: version * 1000 + 7), integratedClientSeq: integrated,
        changeset: Changeset(changes))
}

@Suite struct PartitionStoreApplyTests {
    @Test func appliesServerChangesWithoutCapturingThem() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let report = try await store.apply([
            serverEntry(1, [.insert("orders", .text("A"), order(total: 2, qty: 3)), .insert("items", .integer(1), ["name": .text("pen")])]),
            serverEntry(2, [.update("orders", .text("A"), ["qty": .integer(4)]), .delete("items", .integer(1))]),
            serverEntry(3, [.update("orders", .text("gone"), ["qty": .integer(4)])]),  // update of a missing row: no-op
        ])
        #expect(report.versionsApplied == 3)
        #expect(report.serverVersion == ServerVersion(version: 3, salt: 3007))
        #expect(report.changesPerTable["items"] == 2 && report.changesPerTable["orders"] ?? 0 >= 2, "\(report.changesPerTable)")
        #expect(try await store.pendingChangeCount() == 0)
        #expect(try await store.canonicalDump() == """
            [items]
            [orders]
            t:"A" | customer=t:"ann" | note=null | paid=i:0 | photo=null | qty=i:4 | total=r:2.0

            """)
        let meta = try await store.metadata()
        #expect(meta.serverVersion == ServerVersion(version: 3, salt: 3007))
        // Applications see the integer written into a real column as a real.
        #expect(try await sqlite3(store.path, "SELECT typeof(total) FROM orders").stdout == "real\n")
        try store.close()
    }

    @Test func applyingTheSameChangesTwiceGivesTheSameState() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let changes: [RowChange] = [
            .insert("orders", .text("A"), order()), .update("orders", .text("A"), ["note": .text("n")]),
            .insert("items", .integer(1), ["name": .text("pen"), "price": .real(1)]), .delete("items", .integer(1)),
            .insert("items", .integer(2), ["name": .text("ink")]),
        ]
        try await store.apply([serverEntry(1, changes)])
        let once = try await store.canonicalDump()
        // Re-delivered version: skipped.
        let again = try await store.apply([serverEntry(1, changes)])
        #expect(again.versionsSkipped == 1 && again.versionsApplied == 0)
        #expect(try await store.canonicalDump() == once)
        // The same changes as a new version: the operations themselves are idempotent.
        try await store.apply([serverEntry(2, changes)])
        #expect(try await store.canonicalDump() == once)
        try store.close()
    }

    @Test func anInsertOfAnExistingKeyMergesFieldByField() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen"), "price": .real(1)])])])
        try await store.apply([serverEntry(2, [.insert("items", .integer(1), ["name": .text("ink")])])])
        #expect(try await store.canonicalDump() == "[items]\ni:1 | name=t:\"ink\" | price=r:1.0\n[orders]\n")
        try store.close()
    }

    /// Rows without pending changes are written in place from the download's bytes: an update
    /// or a delete that finds no row is counted skipped, everything else applied; a key the
    /// change also carries as a field must be the change's key.
    @Test func changesWrittenInPlaceAreCountedAndKeepTheirKey() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let report = try await store.apply([
            serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen"), "sku": .integer(1)]), .insert("items", .integer(2), ["name": .text("ink")])]),
            serverEntry(2, [
                .update("items", .integer(1), ["price": .integer(3)]), .update("items", .integer(9), ["price": .real(1)]),
                .delete("items", .integer(2)), .delete("items", .integer(8)),
            ]),
        ])
        #expect(report.changesApplied == 4)
        #expect(report.changesSkipped == 2)
        #expect(report.changesPerTable == ["items": 4], "what a changes-applied event tells: written rows per table")
        #expect(try await store.canonicalDump() == "[items]\ni:1 | name=t:\"pen\" | price=r:3.0\n[orders]\n")
        await #expect(throws: StoreError.self) {
            try await store.apply([serverEntry(3, [.insert("items", .integer(5), ["name": .text("cup"), "sku": .integer(6)])])])
        }
        // A bad change in a later entry: the earlier entries of the download are not kept either.
        await #expect(throws: StoreError.self) {
            try await store.apply([
                serverEntry(3, [.insert("items", .integer(5), ["name": .text("cup")])]),
                serverEntry(4, [.update("items", .integer(5), ["price": .text("cheap")])]),
            ])
        }
        #expect(try await store.canonicalDump() == "[items]\ni:1 | name=t:\"pen\" | price=r:3.0\n[orders]\n")
        #expect(try await store.metadata().serverVersion.version == 2)
        try store.close()
    }

    @Test(arguments: [
        (RowChange.insert("nope", .integer(1), [:]), "table nope"),
        (.update("items", .integer(1), ["colour": .text("red")]), "items.colour"),
        (.update("items", .integer(1), ["price": .text("cheap")]), "items.price"),
        (.update("items", .integer(1), ["name": .null]), "items.name"),
        (.insert("items", .integer(2), ["price": .real(1)]), "items.name"),  // insert lacking a required column
        (.update("orders", .text("A"), ["paid": .integer(2)]), "orders.paid"),
        (.delete("items", .text("1")), "items.sku"),  // text key for an integer key column
    ] as [(RowChange, String)])
    func aChangeThatDoesNotFitTheSchemaAppliesNothing(bad: RowChange, named: String) async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen")])])])
        let before = try await store.canonicalDump()
        let error = await #expect(throws: StoreError.self) {
            try await store.apply([serverEntry(2, [.update("items", .integer(1), ["name": .text("ink")]), bad])])
        }
        #expect(error?.description.contains(named) == true, "\(String(describing: error))")
        #expect(error?.needsReset == false)
        #expect(try await store.canonicalDump() == before)
        #expect(try await store.metadata().serverVersion.version == 1)
        try store.close()
    }

    // MARK: Pending local changes (docs/sync-model.md)

    @Test func fieldsWithPendingLocalChangesKeepTheirLocalValues() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("orders", .text("A"), order(total: 1, qty: 1))])])
        try await sqlite3(store.path, "UPDATE orders SET total = 9 WHERE id = 'A'")
        let report = try await store.apply([serverEntry(2, [.update("orders", .text("A"), ["total": .real(5), "qty": .integer(5)])])])
        #expect(report.fieldsKeptLocal == 1)
        #expect(report.changesPerTable == ["orders": 1], "a row with pending local changes counts once written")
        let dump = try await store.canonicalDump()
        #expect(dump.contains("qty=i:5 | total=r:9.0"))
        // Once the server integrated the local change, its own later values apply.
        let seq = try await store.lastAssignedSeq()
        try await store.apply([serverEntry(3, integrated: seq, [.update("orders", .text("A"), ["total": .real(7)])])])
        #expect(try await store.canonicalDump().contains("qty=i:5 | total=r:7.0"))
        #expect(try await store.pendingChangeCount() == 0)
        #expect(try await store.metadata().integratedSeq == seq)
        try store.close()
    }

    /// The agent's index of the log by row (the log has none) follows the log between applies:
    /// entries trimmed by an acknowledgement stop counting, entries captured since count, and a
    /// collapse (which rewrites entries) is seen too.
    @Test func pendingChangesAreWeighedAcrossTrimsCapturesAndCollapses() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen"), "price": .real(1)])])])
        try await sqlite3(store.path, "UPDATE items SET price = 2 WHERE sku = 1")
        var report = try await store.apply([serverEntry(2, [.update("items", .integer(1), ["price": .real(3), "name": .text("ink")])])])
        #expect(report.fieldsKeptLocal == 1)
        #expect(try await sqlite3(store.path, "SELECT name, price FROM items").stdout == "ink|2.0\n")
        // Acknowledged: the price is the server's again.
        try await store.acknowledge(throughSeq: try await store.lastAssignedSeq())
        try await sqlite3(store.path, "UPDATE items SET name = 'nib' WHERE sku = 1")
        report = try await store.apply([serverEntry(3, [.update("items", .integer(1), ["price": .real(4), "name": .text("cap")])])])
        #expect(report.fieldsKeptLocal == 1)
        #expect(try await sqlite3(store.path, "SELECT name, price FROM items").stdout == "nib|4.0\n")
        // Two more local changes collapsed into one entry: both fields are pending.
        let uploaded = try await store.lastAssignedSeq()
        try await sqlite3(store.path, "UPDATE items SET price = 5 WHERE sku = 1; UPDATE items SET name = 'quill' WHERE sku = 1")
        #expect(try await store.collapsePendingChanges(after: uploaded) == 1)
        report = try await store.apply([serverEntry(4, integrated: uploaded, [.update("items", .integer(1), ["price": .real(6), "name": .text("lid")])])])
        #expect(report.fieldsKeptLocal == 2)
        #expect(try await sqlite3(store.path, "SELECT name, price FROM items").stdout == "quill|5.0\n")
        // Everything acknowledged: nothing is weighed any more.
        try await store.acknowledge(throughSeq: try await store.lastAssignedSeq())
        report = try await store.apply([serverEntry(5, [.update("items", .integer(1), ["price": .real(7)])])])
        #expect(report.fieldsKeptLocal == 0)
        #expect(try await sqlite3(store.path, "SELECT name, price FROM items").stdout == "quill|7.0\n")
    }

    @Test func aServerDeleteOfALocallyInsertedRowIsSkipped() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'mine', NULL)")
        let report = try await store.apply([serverEntry(1, [
            .delete("items", .integer(1)), .update("items", .integer(1), ["name": .text("theirs")]),
        ])])
        #expect(report.changesSkipped == 2)
        #expect(try await store.canonicalDump().contains("i:1 | name=t:\"mine\""))
        try store.close()
    }

    @Test func serverWritesToALocallyDeletedRowAreSkipped() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen")])])])
        try await sqlite3(store.path, "DELETE FROM items WHERE sku = 1")
        try await store.apply([serverEntry(2, [
            .update("items", .integer(1), ["name": .text("x")]), .insert("items", .integer(1), ["name": .text("y")]),
        ])])
        #expect(try await store.canonicalDump() == "[items]\n[orders]\n")
        try store.close()
    }

    @Test func aServerDeleteWinsOverAPendingLocalUpdate() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen"), "price": .real(1)])])])
        try await sqlite3(store.path, "UPDATE items SET price = 2 WHERE sku = 1")
        try await store.apply([serverEntry(2, [.delete("items", .integer(1))])])
        #expect(try await store.canonicalDump() == "[items]\n[orders]\n")
        // The row is gone, the pending update is not: it is still uploaded with its value
        // (kept aside, the log holds no values), and the server ignores it if the row stays gone.
        #expect(try await store.pendingChanges(after: 0)?.changeset.changes == [.update("items", .integer(1), ["price": .real(2)])])
        // A later server insert of the key gets the pending local field: it comes later in server order.
        try await store.apply([serverEntry(3, [.insert("items", .integer(1), ["name": .text("new"), "price": .real(3)])])])
        #expect(try await store.canonicalDump() == "[items]\ni:1 | name=t:\"new\" | price=r:2.0\n[orders]\n")
        try store.close()
    }

    @Test func trimsIntegratedLocalChangesInTheSameTransaction() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'a', NULL); INSERT INTO items VALUES (2, 'b', NULL)")
        let batch = try #require(try await store.pendingChanges(after: 0, limit: 1))
        // The server acknowledges the first upload (an entry without changes), then sends another device's change.
        let report = try await store.apply([
            serverEntry(1, integrated: batch.lastSeq),
            serverEntry(2, integrated: batch.lastSeq, [.update("items", .integer(1), ["name": .text("z")]), .update("items", .integer(2), ["name": .text("z")])]),
        ])
        #expect(report.localChangesTrimmed == 1)
        #expect(report.fieldsKeptLocal == 1)  // row 2's insert is still pending
        #expect(try await store.canonicalDump() == "[items]\ni:1 | name=t:\"z\" | price=null\ni:2 | name=t:\"b\" | price=null\n[orders]\n")
        #expect(try await store.pendingChangeCount() == 1)
        try store.close()
    }
}
