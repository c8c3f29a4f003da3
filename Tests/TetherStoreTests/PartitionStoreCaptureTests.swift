import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

@Suite struct PartitionStoreCaptureTests {
    @Test func capturesExactlyTheCommittedChangesOfAnotherProcess() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let path = store.path
        #expect(try await sqlite3(path, "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('A', 'ann', 1.5, 2, 0, NULL, x'00ff')").status == 0)
        #expect(try await sqlite3(path, "UPDATE orders SET total = 2.5 WHERE id = 'A'").status == 0)
        // Setting a field to the value it has is no change.
        #expect(try await sqlite3(path, "UPDATE orders SET total = 2.5, qty = 2 WHERE id = 'A'").status == 0)
        #expect(try await sqlite3(path, "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('B', 'bob', 3.0, 1, 1, 'x', NULL)").status == 0)
        #expect(try await sqlite3(path, "DELETE FROM orders WHERE id = 'B'").status == 0)
        // A multi-statement transaction rolled back leaves nothing behind.
        #expect(try await sqlite3(path, """
            BEGIN;
            INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('C', 'cy', 9.0, 9, 0, NULL, NULL);
            UPDATE orders SET qty = 9 WHERE id = 'A';
            DELETE FROM orders WHERE id = 'A';
            ROLLBACK;
            """).status == 0)
        // A committed multi-statement transaction is captured in statement order.
        #expect(try await sqlite3(path, """
            BEGIN;
            UPDATE orders SET note = 'rush', paid = 1 WHERE id = 'A';
            INSERT INTO items (sku, name) VALUES (7, 'pen');
            COMMIT;
            """).status == 0)

        // The log names each committed change's row, kind and (for an update) changed columns.
        let log = try await sqlite3(path, "SELECT seq, tbl, pk, kind, coalesce(cols, '-') FROM _tether_log ORDER BY seq")
        #expect(log.stdout == """
            1|orders|A|insert|-
            2|orders|A|update|total
            3|orders|B|insert|-
            4|orders|B|delete|-
            5|orders|A|update|note,paid
            6|items|7|insert|-

            """)
        // Read for upload, the changes carry the rows' values now; the insert of B, gone since,
        // says nothing (its delete follows).
        let logged = try await store.allPendingChanges()
        #expect(logged.map(\.change) == [
            .insert("orders", .text("A"), order(customer: "ann", total: 2.5, qty: 2, paid: true, note: "rush", photo: [0x00, 0xFF])),
            .update("orders", .text("A"), ["total": .real(2.5)]),
            .delete("orders", .text("B")),
            .update("orders", .text("A"), ["note": .text("rush"), "paid": .integer(1)]),
            .insert("items", .integer(7), ["name": .text("pen"), "price": .null]),
        ])
        #expect(logged.map(\.seq) == [1, 2, 4, 5, 6])
        try store.close()
    }

    @Test func capturesValuesExactly() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let app = try appConnection(store.path)
        let tricky = 0.1 + 0.2  // 0.30000000000000004: needs 17 digits
        let text = "quote ' \" backslash \\ newline \n emoji 🚀 nul-free"
        let blob: [UInt8] = [0, 1, 2, 0, 255, 0x7F]
        try await app.write { db in
            try db.execute(
                sql: "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: ["K", text, tricky, Int64.max, 1, nil, Data(blob)])
            try db.execute(sql: "INSERT INTO items (sku, name, price) VALUES (1, 'tricky', ?)", arguments: [tricky])
            try db.execute(sql: "UPDATE orders SET total = 3 WHERE id = 'K'")  // integer into real: stays a real
            try db.execute(sql: "INSERT INTO items (sku, name, price) VALUES (?, 'neg', ?)", arguments: [Int64.min, -0.5])
        }
        let changes = try await store.allPendingChanges().map(\.change)
        // The insert reads the row as it is now: `total` became 3 (stored as a real).
        #expect(changes[0].fields["customer"] == .text(text))
        #expect(changes[0].fields["total"] == .real(3))
        #expect(try await app.read { db in try Double.fetchOne(db, sql: "SELECT total FROM orders WHERE id = 'K'") } == 3)
        #expect(changes[0].fields["qty"] == .integer(.max))
        #expect(changes[0].fields["note"] == .null)
        #expect(changes[0].fields["photo"] == .blob(blob))
        #expect(changes[1] == .insert("items", .integer(1), ["name": .text("tricky"), "price": .real(tricky)]))
        #expect(changes[2] == .update("orders", .text("K"), ["total": .real(3)]))
        #expect(changes[3] == .insert("items", .integer(.min), ["name": .text("neg"), "price": .real(-0.5)]))
        try app.close()
        try store.close()
    }

    @Test func capturesAnAutoAssignedIntegerKey() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        #expect(try await sqlite3(store.path, "INSERT INTO items (name) VALUES ('auto')").status == 0)
        let changes = try await store.allPendingChanges().map(\.change)
        #expect(changes == [.insert("items", .integer(1), ["name": .text("auto"), "price": .null])])
        try store.close()
    }

    @Test func capturesAKeyChangeAsDeleteAndInsert() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('A', 'ann', 1.5, 2, 0, NULL, NULL)")
        try await sqlite3(store.path, "UPDATE orders SET id = 'Z', qty = 3 WHERE id = 'A'")
        let changes = try await store.allPendingChanges().map(\.change)
        #expect(try await sqlite3(store.path, "SELECT pk, kind FROM _tether_log ORDER BY seq").stdout == "A|insert\nA|delete\nZ|insert\n")
        #expect(changes == [
            .delete("orders", .text("A")),
            .insert("orders", .text("Z"), order(customer: "ann", total: 1.5, qty: 3)),
        ])
        try store.close()
    }

    @Test func capturesInsertOrReplaceAsAnInsertOfEveryField() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'pen', 0.5)")
        try await sqlite3(store.path, "INSERT OR REPLACE INTO items VALUES (1, 'ink', NULL)")
        let changes = try await store.allPendingChanges().map(\.change)
        #expect(changes.last == .insert("items", .integer(1), ["name": .text("ink"), "price": .null]))
        try store.close()
    }

    @Test func capturesUpsertsAndDeletesOfWholeTables() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, """
            INSERT INTO items VALUES (1, 'pen', 0.5), (2, 'ink', NULL);
            INSERT INTO items (sku, name) VALUES (1, 'nib') ON CONFLICT (sku) DO UPDATE SET name = excluded.name;
            DELETE FROM items;
            """)
        let changes = try await store.allPendingChanges().map(\.change)
        #expect(try await sqlite3(store.path, "SELECT pk, kind, coalesce(cols, '-') FROM _tether_log ORDER BY seq").stdout
            == "1|insert|-\n2|insert|-\n1|update|name\n1|delete|-\n2|delete|-\n")
        #expect(changes == [.delete("items", .integer(1)), .delete("items", .integer(2))], "the rows are gone: only the deletes say something")
        try store.close()
    }

    @Test func aReadOnlyStoreRejectsApplicationWrites() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'pen', 0.5)")
        try await store.setReadOnly(true)
        #expect(try await store.metadata().isReadOnly)
        for sql in [
            "INSERT INTO items VALUES (2, 'ink', NULL)",
            "UPDATE items SET name = 'quill' WHERE sku = 1",
            "DELETE FROM items WHERE sku = 1",
        ] {
            let result = try await sqlite3(store.path, sql)
            #expect(result.status != 0)
            #expect(result.stderr.contains("partition shop-1 is read-only"), "stderr: \(result.stderr)")
        }
        // Another binding sees the same error message.
        let app = try appConnection(store.path)
        do {
            try await app.write { db in try db.execute(sql: "DELETE FROM items") }
            Issue.record("a write to a read-only store succeeded")
        } catch let error as DatabaseError {
            #expect(error.message == "partition shop-1 is read-only")
        }
        // The agent still applies server changes.
        try await store.apply([DownloadEntry(
            serverVersion: ServerVersion(version: 1, salt: 5), integratedClientSeq: 1,
            changeset: Changeset([.insert("items", .integer(2), ["name": .text("ink"), "price": .null])]))])
        #expect(try await sqlite3(store.path, "SELECT name FROM items WHERE sku = 2").stdout == "ink\n")
        #expect(try await store.pendingChangeCount() == 0)

        try await store.setReadOnly(false)
        #expect(try await sqlite3(store.path, "UPDATE items SET name = 'quill' WHERE sku = 1").status == 0)
        try app.close()
        try store.close()
    }

    @Test func triggersDroppedByAnApplicationAreRestoredOnOpen() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        try await makeStore(dir).close()
        let path = dir.appending("store.sqlite")
        try await sqlite3(path, "DROP TRIGGER _tether_trg_items_ins")
        let store = try await makeStore(dir)
        try await sqlite3(path, "INSERT INTO items VALUES (1, 'pen', 0.5)")
        #expect(try await store.pendingChangeCount() == 1)
        try store.close()
    }
}
