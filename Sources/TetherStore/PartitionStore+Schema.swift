import GRDB
import Synchronization
import TetherProtocol

extension PartitionStore {
    /// Applies a non-breaking schema change (tables and nullable columns added) in place, in
    /// one transaction, and returns the differences applied (empty when already current).
    /// A breaking change throws `.breakingSchemaChange`: only a client reset handles those.
    @discardableResult
    package func upgradeSchema(to schema: Schema) async throws(StoreError) -> SchemaDiff {
        let problems = Self.storeProblems(schema)
        guard problems.isEmpty else { throw .invalidSchema(problems: problems) }
        let previous = self.schema
        do {
            return try await write { db in
                let recorded = try MetaTable.recordedSchema(db, path: self.path)
                return try self.upgrade(db, from: recorded, to: schema)
            }
        } catch {
            setSchema(previous)  // the transaction rolled back
            throw error
        }
    }

    /// Creates, adopts or checks the store inside the opening write transaction.
    func prepare(_ db: Database, requested schema: Schema, tolerateAlteredTables: Bool = false) throws {
        guard let meta = try MetaTable.fetch(db) else {
            // New file, or application-made tables to adopt.
            let missing = try SchemaVerifier.verify(db, schema: schema, path: path, allowMissingTables: true)
            let adopted = schema.tables.filter { table in !missing.contains { $0.name == table.name } }
            for table in missing { try db.execute(sql: StoreSQL.createTable(table)) }
            try MetaTable.insert(db, partition: partition.rawValue, schema: schema)
            try installTriggers(db, schema: schema)
            for table in adopted { try ChangeLog.captureExistingRows(db, table: table) }
            setSchema(schema)
            return
        }
        guard meta.partition == partition.rawValue else {
            throw StoreError.partitionMismatch(path: path, expected: partition.rawValue, found: meta.partition)
        }
        let recorded = try MetaTable.recordedSchema(db, path: path)
        do {
            try SchemaVerifier.verify(db, schema: recorded, path: path, allowMissingTables: false)
        } catch let error as StoreError where tolerateAlteredTables && error.isSchemaAlteration {
            // Left as the application made it: the client reset that follows repairs it.
            setSchema(recorded)
            healthState.withLock { $0.alteration = error }
            return
        }
        if recorded == schema {
            let recreated = try installTriggers(db, schema: schema)
            healthState.withLock { $0.triggersRecreatedAtOpen = recreated }
            setSchema(schema)
        } else {
            try upgrade(db, from: recorded, to: schema)
        }
    }

    /// Adds tables and nullable columns, recreates the triggers and records the new schema.
    @discardableResult
    func upgrade(_ db: Database, from old: Schema, to new: Schema) throws -> SchemaDiff {
        let diff = SchemaDiff(from: old, to: new)
        if diff.isBreaking { throw StoreError.breakingSchemaChange(path: path, differences: diff.summary) }
        for difference in diff.differences {
            switch difference {
            case .tableAdded(let name):
                if let table = new.table(name) { try db.execute(sql: StoreSQL.createTable(table)) }
            case .columnAdded(let table, let column):
                try db.execute(sql: StoreSQL.addColumn(column, to: table))
            case .tableRemoved, .columnRemoved, .columnTypeChanged, .primaryKeyChanged:
                break  // breaking: thrown above
            }
        }
        try MetaTable.setSchema(db, new)
        try installTriggers(db, schema: new)
        setSchema(new)
        return diff
    }

    /// Makes the store's triggers exactly the expected ones (recreating them when an
    /// application dropped or changed one, or the schema, partition or read-only flag changed).
    /// Returns the names of the expected triggers that were missing or differed (empty when none).
    @discardableResult
    func installTriggers(_ db: Database, schema: Schema) throws -> [String] {
        try Self.installTriggers(db, schema: schema, partition: partition.rawValue)
    }

    /// ``installTriggers(_:schema:)`` for the store open on `db` (also used by the migration
    /// that changed the change log's format). The read-only guards follow the flag in `_tether_meta`.
    @discardableResult
    static func installTriggers(_ db: Database, schema: Schema, partition: String) throws -> [String] {
        let readOnly = try Bool.fetchOne(db, sql: "SELECT read_only = 1 FROM _tether_meta WHERE id = 1") ?? false
        var expected: [String: String] = [:]
        for table in schema.tables {
            for trigger in StoreSQL.triggers(for: table, partition: partition, readOnly: readOnly) {
                expected[trigger.name] = trigger.sql
            }
        }
        let present = try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ?",
            arguments: [StoreSQL.triggerPrefix.count, StoreSQL.triggerPrefix])
        var existing: [String: String] = [:]
        for row in present { existing[row["name"]] = row["sql"] }
        guard existing != expected else { return [] }
        for name in existing.keys { try db.execute(sql: "DROP TRIGGER \(StoreSQL.quote(name))") }
        for (_, sql) in expected.sorted(by: { $0.key < $1.key }) { try db.execute(sql: sql) }
        return expected.keys.filter { existing[$0] != expected[$0] }.sorted()
    }
}
