import Foundation
import GRDB
import Testing
import TetherTestSupport
import TetherProtocol
import TetherStore

@Suite struct StoreRewriterTests {
    /// 600 items (more than two pages of the merge join), keys 10, 20, …, 6000.
    static func initialItems() -> [RowChange] {
        (1...600).map { .insert("items", .integer(Int64($0 * 10)), ["name": .text("item\($0)"), "price": .real(Double($0))]) }
    }

    @Test func rewritesInPlaceWritingOnlyDifferingRowsWhileAnApplicationStaysConnected() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, Self.initialItems() + [.insert("orders", .text("A"), order())])])
        // An application connection opened before the rewrite, with a statement it prepared.
        let app = try appConnection(store.path)
        #expect(try await app.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") } == 600)

        var state: [StateRow] = Self.initialItems().map { StateRow(table: $0.table, key: $0.key, fields: $0.fields) }
        state[5].fields["price"] = .real(-1)  // 5 updates, spread over the pages
        state[299].fields["name"] = .text("changed")
        state[300].fields["price"] = .null
        state[301].fields = ["name": .text("x"), "price": .real(0.5)]
        state[599].fields["name"] = .text("last")
        state.remove(at: 400)  // 3 deletes
        state.remove(at: 200)
        state.remove(at: 0)
        state += [  // 4 inserts: before the first key, between keys, after the last one
            StateRow(table: "items", key: .integer(1), fields: ["name": .text("first")]),
            StateRow(table: "items", key: .integer(15), fields: ["name": .text("between")]),
            StateRow(table: "items", key: .integer(2995), fields: ["name": .text("between2")]),
            StateRow(table: "items", key: .integer(99_999), fields: ["name": .text("after")]),
        ]
        // orders: A unchanged, B new.
        state.append(StateRow(table: "orders", key: .text("A"), fields: order()))
        state.append(StateRow(table: "orders", key: .text("B"), fields: order(customer: "bo")))

        let report = try await store.resetInPlace(
            to: ArrayStateSource(state), serverVersion: ServerVersion(version: 9, salt: 99))
        #expect(report.rewrite.inserted == 5)
        #expect(report.rewrite.updated == 5)
        #expect(report.rewrite.deleted == 3)
        #expect(report.rewrite.unchanged == 600 - 5 - 3 + 1)
        #expect(report.recovery == nil)
        #expect(try await store.pendingChangeCount() == 0)  // nothing captured

        var expected: [String: [RowKey: [String: FieldValue]]] = [:]
        for row in state { expected[row.table, default: [:]][row.key] = row.fields }
        #expect(try await store.canonicalDump() == CanonicalDump.dump(schema: testSchema, rows: expected))
        // The application's connection is still valid and sees the new state.
        let seen = try await app.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM items"), try String.fetchOne(db, sql: "SELECT name FROM items WHERE sku = 15"))
        }
        #expect(seen.0 == 601)
        #expect(seen.1 == "between")
        try await app.write { db in try db.execute(sql: "UPDATE items SET price = 1 WHERE sku = 15") }
        #expect(try await store.pendingChangeCount() == 1)
        try app.close()
        try store.close()
    }

    @Test func rewritingToTheSameStateWritesNothing() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, Self.initialItems())])
        let report = try await store.resetInPlace(
            to: ArrayStateSource(Self.initialItems().map { StateRow(table: $0.table, key: $0.key, fields: $0.fields) }),
            serverVersion: ServerVersion(version: 1, salt: 1001))
        #expect(report.rewrite.written == 0)
        #expect(report.rewrite.unchanged == 600)
        try store.close()
    }

    @Test func rewritesFromAnotherStoreFile() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let staging = try await makeStore(dir, name: "staging.sqlite")
        try await staging.apply([serverEntry(1, Self.initialItems() + [.insert("orders", .text("Z"), order(photo: [1, 2]))])])
        let expected = try await staging.canonicalDump()
        try staging.close()

        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(3), ["name": .text("old")])])])
        let source = try StoreStateSource(path: dir.appending("staging.sqlite"), schema: testSchema, pageSize: 50)
        let report = try await store.resetInPlace(to: source, serverVersion: ServerVersion(version: 5, salt: 5))
        #expect(report.rewrite.inserted == 601 && report.rewrite.deleted == 1)
        #expect(try await store.canonicalDump() == expected)
        try store.close()
    }

    @Test(arguments: [
        [StateRow(table: "items", key: .integer(2), fields: ["name": .text("b")]),
         StateRow(table: "items", key: .integer(1), fields: ["name": .text("a")])],
        [StateRow(table: "orders", key: .text("A"), fields: order()),
         StateRow(table: "items", key: .integer(1), fields: ["name": .text("a")])],
        [StateRow(table: "items", key: .integer(1), fields: ["name": .text("a")]),
         StateRow(table: "items", key: .integer(1), fields: ["name": .text("a")])],
    ])
    func anUnsortedStateChangesNothing(rows: [StateRow]) async throws {
        struct Unsorted: StateSource {
            var rows: [StateRow]
            mutating func next() throws(StoreError) -> StateRow? { rows.isEmpty ? nil : rows.removeFirst() }
        }
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(7), ["name": .text("seven")])])])
        try await sqlite3(store.path, "INSERT INTO items VALUES (8, 'local', NULL)")
        let before = try await store.canonicalDump()
        await #expect(throws: StoreError.self) {
            try await store.resetInPlace(to: Unsorted(rows: rows), serverVersion: ServerVersion(version: 2, salt: 2))
        }
        #expect(try await store.canonicalDump() == before)
        #expect(try await store.pendingChangeCount() == 1)
        #expect(try await store.metadata().serverVersion.version == 1)
        try store.close()
    }

    @Test func aResetCanReplaceTheSchemaInPlace() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen")])])])
        // Breaking: items.price becomes a required text column; orders is dropped; staff is new.
        let v3 = Schema(version: 3, tables: [
            TableSchema(name: "items", primaryKey: "sku", columns: [
                ColumnSchema(name: "sku", type: .integer), ColumnSchema(name: "name", type: .text),
                ColumnSchema(name: "price", type: .text),
            ]),
            TableSchema(name: "staff", primaryKey: "name", columns: [ColumnSchema(name: "name", type: .text)]),
        ])
        let state = [
            StateRow(table: "items", key: .integer(1), fields: ["name": .text("pen"), "price": .text("cheap")]),
            StateRow(table: "staff", key: .text("bo"), fields: [:]),
        ]
        let report = try await store.resetInPlace(
            to: ArrayStateSource(state), serverVersion: ServerVersion(version: 1, salt: 3), schema: v3)
        #expect(!report.schemaDifferences.isEmpty)
        #expect(store.schema == v3)
        #expect(try await store.canonicalDump() == "[items]\ni:1 | name=t:\"pen\" | price=t:\"cheap\"\n[staff]\nt:\"bo\"\n")
        #expect(try await sqlite3(store.path, "UPDATE items SET price = 'dear'").status == 0)
        #expect(try await store.allPendingChanges().map(\.change) == [.update("items", .integer(1), ["price": .text("dear")])])
        try store.close()
        try await makeStore(dir, schema: v3).close()
    }

    @Test func emptiesTheStoreInPlace() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.setClientFile(ClientFileIdentity(id: 4, salt: 44))
        try await store.apply([serverEntry(3, Self.initialItems())])
        try await sqlite3(store.path, "INSERT INTO orders (id, customer, total, qty, paid) VALUES ('A', 'a', 1, 1, 0)")
        let app = try appConnection(store.path)
        #expect(try await store.emptyInPlace() == 601)
        #expect(try await store.canonicalDump() == "[items]\n[orders]\n")
        #expect(try await store.pendingChangeCount() == 0)
        let meta = try await store.metadata()
        #expect(meta.serverVersion == .none && meta.clientFile == nil)
        #expect(try await app.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") } == 0)
        try app.close()
        try store.close()
    }

    /// Both ways of rewriting — the merge join over rows read one by one, and SQL over a staged
    /// store file attached to the connection — reach the state and count the same.
    @Test(arguments: [3, 99, 2718] as [UInt64], [false, true])
    func aRandomRewriteReachesTheStateWritingOnlyDifferences(seed: UInt64, fromStagedFile: Bool) async throws {
        var rng = SeededRandom(seed: seed)
        func randomItems() -> [RowKey: [String: FieldValue]] {
            var rows: [RowKey: [String: FieldValue]] = [:]
            for sku in 1...700 where Int.random(in: 0..<3, using: &rng) > 0 {
                rows[.integer(Int64(sku))] = [
                    "name": .text(["a", "b"].randomElement(using: &rng)!),
                    "price": Bool.random(using: &rng) ? .null : .real(Double(Int.random(in: 0...2, using: &rng))),
                ]
            }
            return rows
        }
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let existing = randomItems(), target = randomItems()
        try await store.apply([serverEntry(1, existing.map { .insert("items", $0.key, $0.value) })])
        let rows = target.map { StateRow(table: "items", key: $0.key, fields: $0.value) }
        let report: ResetInPlaceReport
        if fromStagedFile {
            let staging = try await makeStore(dir, name: "staging.sqlite")
            try await staging.insertStateRows(rows)
            try staging.close()
            let source = try StoreStateSource(path: dir.appending("staging.sqlite"), schema: testSchema)
            #expect(source.databasePath != nil)
            report = try await store.resetInPlace(to: source, serverVersion: ServerVersion(version: 2, salt: 2))
        } else {
            report = try await store.resetInPlace(to: ArrayStateSource(rows), serverVersion: ServerVersion(version: 2, salt: 2))
        }
        #expect(try await store.canonicalDump() == CanonicalDump.dump(schema: testSchema, rows: ["items": target]))
        let kept = Set(existing.keys).intersection(target.keys)
        #expect(report.rewrite.inserted == target.count - kept.count, "seed \(seed)")
        #expect(report.rewrite.deleted == existing.count - kept.count, "seed \(seed)")
        #expect(report.rewrite.updated == kept.filter { existing[$0] != target[$0] }.count, "seed \(seed)")
        #expect(report.rewrite.unchanged == kept.filter { existing[$0] == target[$0] }.count, "seed \(seed)")
        try store.close()
    }

    /// The rewrite runs without the capture triggers (a BEFORE INSERT trigger would run for
    /// every row offered) and puts them back in the same transaction: every trigger is there
    /// after the reset, and an application's next write is captured.
    @Test func theTriggersAreBackAfterTheRewriteAndCaptureAgain() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        let path = dir.appending("store.sqlite")
        let triggers = "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name)"
        let before = try await sqlite3(path, triggers).stdout
        let staging = try await makeStore(dir, name: "staging.sqlite")
        try await staging.insertStateRows([StateRow(table: "orders", key: .text("o1"), fields: order())])
        try staging.close()
        try await store.resetInPlace(
            to: try StoreStateSource(path: dir.appending("staging.sqlite"), schema: testSchema), serverVersion: ServerVersion(version: 2, salt: 2))
        #expect(before.contains("_tether_trg_orders_upd"))
        #expect(try await sqlite3(path, triggers).stdout == before)
        #expect(try await store.pendingChangeCount() == 0, "the rewrite itself is not captured")
        #expect(try await sqlite3(path, "UPDATE orders SET total = 9 WHERE id = 'o1'").status == 0)
        #expect(try await store.pendingChangeCount() == 1)
    }
}
