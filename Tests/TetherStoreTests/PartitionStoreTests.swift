import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

@Suite struct PartitionStoreTests {
    @Test func createsAWalStoreWithTypedTables() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let meta = try await store.metadata()
        #expect(meta.partition == "shop-1")
        #expect(meta.schemaVersion == 1)
        #expect(meta.serverVersion == .none)
        #expect(meta.clientFile == nil)
        #expect(!meta.isReadOnly)

        let mode = try await sqlite3(store.path, "PRAGMA journal_mode")
        #expect(mode.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "wal")
        let tables = try await sqlite3(store.path, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        #expect(tables.stdout.contains("orders\n"))
        #expect(tables.stdout.contains("items\n"))
        #expect(tables.stdout.contains("_tether_meta\n"))

        // Types, NOT NULL and booleans are enforced by SQLite itself.
        let good = "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('A', 'ann', 1.5, 2, 1, NULL, NULL)"
        #expect(try await sqlite3(store.path, good).status == 0)
        for bad in [
            "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('B', 'ann', 'lots', 2, 1, NULL, NULL)",  // text in a real column
            "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('B', 'ann', 1.5, 2, 2, NULL, NULL)",  // boolean 2
            "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('B', NULL, 1.5, 2, 1, NULL, NULL)",  // NOT NULL
            "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('B', 'ann', 1.5, 2.5, 1, NULL, NULL)",  // real in an integer column
            "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('B', 'ann', 1.5, 2, 1, x'00', NULL)",  // blob in a text column
            "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES (x'07', 'ann', 1.5, 2, 1, NULL, NULL)",  // blob key in a text key column
        ] {
            let result = try await sqlite3(store.path, bad)
            #expect(result.status != 0, "accepted: \(bad)")
            #expect(result.stderr.contains("constraint failed"), "\(result.stderr)")
        }
        try store.close()
    }

    @Test func reopensWithTheSameSchema() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items (sku, name) VALUES (1, 'pen')")
        try store.close()
        let again = try await makeStore(dir)
        #expect(try await again.pendingChangeCount() == 1)
        #expect(try PartitionStore.recordedSchema(path: again.path) == testSchema)
        try again.close()
    }

    @Test(arguments: [
        ("ALTER TABLE orders ADD COLUMN extra TEXT", "orders", "extra"),
        ("ALTER TABLE orders RENAME COLUMN note TO memo", "orders", "memo"),
        ("DROP TABLE items", "items", nil),
        ("CREATE TABLE notes (id INTEGER PRIMARY KEY)", "notes", nil),
    ] as [(String, String, String?)])
    func openingAStoreWhoseTablesWereAlteredFails(sql: String, table: String, column: String?) async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let path = dir.appending("store.sqlite")
        try await makeStore(dir).close()
        #expect(try await sqlite3(path, sql).status == 0)
        let error = await #expect(throws: StoreError.self) { try await makeStore(dir) }
        guard case .schemaMismatch(let errorPath, let errorTable, let errorColumn, _) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(errorPath == path)
        #expect(errorTable == table)
        #expect(errorColumn == column)
        #expect(error?.description.contains(table) == true)
        #expect(error?.needsReset == true)
    }

    @Test func refusesAForeignDatabaseWithoutTouchingIt() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let path = dir.appending("app.sqlite")
        try await sqlite3(path, "CREATE TABLE orders (id TEXT PRIMARY KEY, whatever BLOB)")
        let error = await #expect(throws: StoreError.self) {
            try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema)
        }
        #expect(error?.description.contains("orders") == true)
        let tables = try await sqlite3(path, "SELECT group_concat(name) FROM sqlite_master WHERE type = 'table'")
        #expect(tables.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "orders")
    }

    @Test func adoptsMatchingApplicationTablesAndCapturesTheirRows() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let path = dir.appending("app.sqlite")
        try await sqlite3(path, """
            CREATE TABLE items (sku INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, price REAL);
            INSERT INTO items VALUES (1, 'pen', 0.5), (2, 'ink', NULL);
            """)
        let store = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema)
        let pending = try await store.allPendingChanges().map(\.change)
        #expect(pending == [
            .insert("items", .integer(1), ["name": .text("pen"), "price": .real(0.5)]),
            .insert("items", .integer(2), ["name": .text("ink"), "price": .null]),
        ])
        try store.close()
    }

    @Test func refusesAStoreOfAnotherPartition() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        try await makeStore(dir).close()
        let error = await #expect(throws: StoreError.self) {
            try await PartitionStore.open(path: dir.appending("store.sqlite"), partition: PartitionName("other")!, schema: testSchema)
        }
        #expect(error == .partitionMismatch(path: dir.appending("store.sqlite"), expected: "other", found: "shop-1"))
    }

    @Test func rejectsAnInvalidSchema() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let bad = Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "nope", columns: [ColumnSchema(name: "a", type: .text)])])
        await #expect(throws: StoreError.self) { try await makeStore(dir, schema: bad) }
        let reserved = Schema(version: 1, tables: [
            TableSchema(name: "grdb_migrations", primaryKey: "identifier", columns: [ColumnSchema(name: "identifier", type: .text)]),
        ])
        let error = await #expect(throws: StoreError.self) { try await makeStore(dir, schema: reserved) }
        #expect(error?.description.contains("grdb_migrations") == true)
    }
}

@Suite struct SchemaUpgradeTests {
    static let v2 = Schema(version: 2, tables: testSchema.tables.map { table in
        var table = table
        if table.name == "orders" { table.columns.append(ColumnSchema(name: "tip", type: .real, nullable: true)) }
        return TableSchema(name: table.name, primaryKey: table.primaryKey, columns: table.columns)
    } + [TableSchema(name: "staff", primaryKey: "name", columns: [ColumnSchema(name: "name", type: .text)])])

    @Test func appliesANonBreakingUpgradeInPlace() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('A', 'ann', 1.5, 2, 1, NULL, NULL)")
        let diff = try await store.upgradeSchema(to: Self.v2)
        #expect(!diff.isBreaking)
        #expect(diff.differences.count == 2)
        #expect(store.schema == Self.v2)
        #expect(try await store.metadata().schemaVersion == 2)

        // The new column is captured, the new table exists and is captured, old rows are kept.
        #expect(try await sqlite3(store.path, "UPDATE orders SET tip = 0.25 WHERE id = 'A'; INSERT INTO staff VALUES ('bo')").status == 0)
        let pending = try await store.allPendingChanges().map(\.change)
        #expect(pending.count == 3)
        #expect(pending[1] == .update("orders", .text("A"), ["tip": .real(0.25)]))
        #expect(pending[2] == .insert("staff", .text("bo"), [:]))
        try store.close()

        // Reopening with the new schema works; with the old one it is a breaking change.
        try await makeStore(dir, schema: Self.v2).close()
        let error = await #expect(throws: StoreError.self) { try await makeStore(dir, schema: testSchema) }
        guard case .breakingSchemaChange = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(error?.needsReset == true)
    }

    @Test func opensWithANewerNonBreakingSchema() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        try await makeStore(dir).close()
        let store = try await makeStore(dir, schema: Self.v2)
        #expect(try PartitionStore.recordedSchema(path: store.path) == Self.v2)
        try store.close()
    }

    @Test func refusesABreakingUpgrade() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        var tables = testSchema.tables
        tables[0].columns.append(ColumnSchema(name: "required", type: .integer))  // items: not nullable
        let breaking = Schema(version: 2, tables: tables)
        let error = await #expect(throws: StoreError.self) { try await store.upgradeSchema(to: breaking) }
        #expect(error?.description.contains("required") == true)
        #expect(store.schema == testSchema)
        try store.close()
    }
}
