import Foundation
import GRDB
import Synchronization
import TetherProtocol

extension PartitionStore {
    /// How an application altered the store's tables, when it was opened with
    /// `tolerateAlteredTables` and they differ from its schema; nil otherwise.
    package var alteration: StoreError? { healthState.withLock { $0.alteration } }

    /// Capture triggers that were missing or changed when the store was opened and were
    /// recreated (changes made while they were missing were not captured).
    package var triggersRecreatedAtOpen: [String] { healthState.withLock { $0.triggersRecreatedAtOpen } }

    /// True when the file at `path` is an empty database: zero bytes, or SQLite with no table
    /// at all (an application's `sqlite3 store.sqlite` before the agent created the store).
    /// The agent creates the store in such a file instead of refusing it.
    package static func isEmptyDatabase(path: String) throws(StoreError) -> Bool {
        // Attributes that cannot be read: the read below fails too, and says why.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        if size == 0 { return true }
        return try readFile(at: path) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 }
    }

    /// `PRAGMA quick_check`: the problems found, empty when the file is sound. Cheaper than
    /// ``integrityCheck()``: the agent runs it every time it opens a store.
    package func quickCheck() async throws(StoreError) -> [String] {
        let problems = try await read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        return problems == ["ok"] ? [] : problems
    }

    /// Verifies the user tables against the store's schema when `PRAGMA schema_version` moved
    /// since the last check (cheap otherwise: one pragma). Throws `.schemaMismatch` naming the
    /// table or column an application altered; recreates capture triggers it dropped.
    package func checkSchema() async throws(StoreError) -> StoreSchemaCheck {
        let known = healthState.withLock { $0.schemaVersion }
        let current = try await read { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0 }
        if current == known { return .unchanged }
        let schema = self.schema
        let path = self.path
        let (recreated, version) = try await write { db in
            try SchemaVerifier.verify(db, schema: schema, path: path, allowMissingTables: false)
            let recreated = try self.installTriggers(db, schema: schema)
            return (recreated, try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0)
        }
        healthState.withLock { $0.schemaVersion = version }
        return recreated.isEmpty ? .verified : .triggersRecreated(recreated)
    }

    /// Inside a reset's transaction: makes the user tables exactly `schema`'s again after an
    /// application altered them. Tables not in the schema are dropped, missing ones created,
    /// altered ones dropped and recreated empty (the rewrite then fills them from the server's
    /// state); the triggers are reinstalled. Everything dropped is in the reset's backup.
    /// Returns what was repaired (empty for a sound store, which is left untouched).
    func repairTables(_ db: Database, schema: Schema) throws -> [String] {
        var repaired: [String] = []
        let present = try SchemaVerifier.userTables(db)
        for name in present where schema.table(name) == nil {
            try db.execute(sql: "DROP TABLE \(StoreSQL.quote(name))")
            repaired.append("table \(name) dropped: it is not in the schema")
        }
        for table in schema.tables {
            if !present.contains(table.name) {
                try db.execute(sql: StoreSQL.createTable(table))
                repaired.append("table \(table.name) created again")
            } else if try !Self.fits(db, table: table, path: path) {
                try db.execute(sql: "DROP TABLE \(StoreSQL.quote(table.name))")
                try db.execute(sql: StoreSQL.createTable(table))
                repaired.append("table \(table.name) recreated to the schema")
            }
        }
        if !repaired.isEmpty {
            try installTriggers(db, schema: schema)
            healthState.withLock { $0.alteration = nil }
        }
        return repaired
    }

    /// Whether `table` is as the schema says. Only a mismatch says no: any other error (I/O, a
    /// damaged page) is thrown, so a table is never dropped for a read that failed.
    private static func fits(_ db: Database, table: TableSchema, path: String) throws -> Bool {
        do {
            try SchemaVerifier.verify(db, table: table, path: path)
            return true
        } catch StoreError.schemaMismatch {
            return false
        }
    }
}
