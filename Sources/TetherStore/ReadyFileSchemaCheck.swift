import GRDB
import TetherProtocol

/// Whether a ready file holds exactly what a store of its schema holds (docs/store.md, "Ready
/// files"). The expected objects are not described here a second time: they are made by the
/// store's own code — the internal migrations, `StoreSQL.createTable` for each table of the
/// schema, `_tether_meta`, the capture triggers — in an empty in-memory database, and the
/// file's `sqlite_master` must hold the same objects (type, name, table and SQL text), no more,
/// no fewer. An extra index (an expression that errors, a `UNIQUE` index on a constant), an
/// extra table, view or trigger, a table whose columns, types, keys or constraints differ:
/// each is a difference, and the file is refused.
enum ReadyFileSchemaCheck {
    /// One row of `sqlite_master`.
    struct Object: Hashable, Comparable, CustomStringConvertible {
        var type: String
        var name: String
        var table: String
        var sql: String?

        static func < (a: Object, b: Object) -> Bool { (a.type, a.name) < (b.type, b.name) }

        var description: String { "\(type) \(name.debugDescription)" + (table == name ? "" : " on \(table.debugDescription)") }
    }

    /// The objects of the database open on `db`.
    static func objects(_ db: Database) throws -> Set<Object> {
        let rows = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master")
        return Set(rows.map { Object(type: $0["type"] ?? "", name: $0["name"] ?? "", table: $0["tbl_name"] ?? "", sql: $0["sql"]) })
    }

    /// The objects a store of `schema` for `partition` holds, made by the store's code.
    /// `readOnly`: the read-only guards are among the triggers (as `_tether_meta` says).
    static func expectedObjects(schema: Schema, partition: String, readOnly: Bool) throws -> Set<Object> {
        let queue = try DatabaseQueue()
        try InternalMigrations.migrator.migrate(queue)
        return try queue.write { db in
            for table in schema.tables { try db.execute(sql: StoreSQL.createTable(table)) }
            try MetaTable.insert(db, partition: partition, schema: schema)
            try MetaTable.setReadOnly(db, readOnly)
            try PartitionStore.installTriggers(db, schema: schema, partition: partition)
            return try objects(db)
        }
    }

    /// What differs between the objects `expected` and those `actual` holds, one sentence each
    /// (empty when they are the same).
    static func differences(expected: Set<Object>, actual: Set<Object>) -> [String] {
        let expectedByKey = Dictionary(expected.map { ("\($0.type) \($0.name)", $0) }, uniquingKeysWith: { a, _ in a })
        let actualByKey = Dictionary(actual.map { ("\($0.type) \($0.name)", $0) }, uniquingKeysWith: { a, _ in a })
        var found: [String] = []
        for object in actual.sorted() {
            guard let wanted = expectedByKey["\(object.type) \(object.name)"] else {
                found.append("\(object) is not part of a store of the schema")
                continue
            }
            if wanted != object { found.append("\(object) is not defined as the store defines it") }
        }
        for object in expected.sorted() where actualByKey["\(object.type) \(object.name)"] == nil {
            found.append("\(object) is missing")
        }
        return found
    }
}

extension PartitionStore {
    /// Refuses a ready file whose schema is not exactly the one a store of ``schema`` has
    /// (``ReadyFileSchemaCheck``): any object more, less or defined otherwise throws
    /// ``StoreError/readyFileSchema(path:differences:)``. A ready file is the server's (checked by
    /// its digest); this keeps what the server can put into a device's store to rows of the
    /// schema's tables, so an application's writes meet only the store's own definitions.
    package func checkReadyFileObjects() async throws(StoreError) {
        let schema = self.schema
        let partition = self.partition.rawValue
        let differences = try await read { db in
            let readOnly = try Bool.fetchOne(db, sql: "SELECT read_only = 1 FROM _tether_meta WHERE id = 1") ?? false
            let expected = try ReadyFileSchemaCheck.expectedObjects(schema: schema, partition: partition, readOnly: readOnly)
            return ReadyFileSchemaCheck.differences(expected: expected, actual: try ReadyFileSchemaCheck.objects(db))
        }
        if !differences.isEmpty { throw StoreError.readyFileSchema(path: path, differences: differences) }
    }
}
