import GRDB
import TetherProtocol

/// The rows the change log names (seq ≤ a bound) as they were before a reset rewrote the store:
/// copied, inside the reset's transaction, into one temporary table per user table
/// (`temp._tether_recover_<table>`, indexed by key), because the log holds no values and the
/// rewrite replaces the rows with the server's. The recovery replay reads the local values
/// from here. Costs disk (SQLite's temporary files) in proportion to the rows with unsynced
/// changes, not memory.
struct LoggedRowSnapshot {
    /// The last seq of the log the copies cover.
    let through: Int64
    private let tables: [String: TableSchema]

    /// Copies the logged rows of every table of `schema` that exists in the store.
    static func take(_ db: Database, schema: Schema, through: Int64) throws -> LoggedRowSnapshot {
        var tables: [String: TableSchema] = [:]
        for table in schema.tables {
            let copy = tableName(table.name)
            try db.execute(sql: "DROP TABLE IF EXISTS temp.\(StoreSQL.quote(copy))")
            guard try db.tableExists(table.name, in: "main") else { continue }
            let pk = StoreSQL.quote(table.primaryKey)
            try db.execute(sql: """
                CREATE TEMP TABLE \(StoreSQL.quote(copy)) AS
                SELECT * FROM main.\(StoreSQL.quote(table.name))
                WHERE \(pk) IN (SELECT pk FROM main._tether_log WHERE tbl = \(StoreSQL.literal(table.name)) AND seq <= \(through))
                """)
            try db.execute(sql: "CREATE UNIQUE INDEX temp.\(StoreSQL.quote(copy + "_pk")) ON \(StoreSQL.quote(copy)) (\(pk))")
            tables[table.name] = table
        }
        return LoggedRowSnapshot(through: through, tables: tables)
    }

    /// The row's value columns before the rewrite, or nil when it did not exist.
    func values(_ db: Database, _ table: String, _ key: RowKey) throws -> [String: FieldValue]? {
        guard let schema = tables[table] else { return nil }
        let sql = "SELECT * FROM temp.\(StoreSQL.quote(Self.tableName(table))) WHERE \(StoreSQL.quote(schema.primaryKey)) = ?"
        guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [key.databaseValue]) else { return nil }
        return RowWriter.fields(of: row, schema)
    }

    /// Drops the copies.
    func drop(_ db: Database) throws {
        for table in tables.keys { try db.execute(sql: "DROP TABLE IF EXISTS temp.\(StoreSQL.quote(Self.tableName(table)))") }
    }

    private static func tableName(_ table: String) -> String { "_tether_recover_" + table }
}
