import GRDB
import TetherProtocol

/// Row-level writes to user tables inside a database access. Callers set the apply flag
/// (so the capture triggers stay quiet) and validate values first.
enum RowWriter {
    /// The row's value columns (primary key excluded), or nil when it does not exist.
    /// The value columns are selected by name in schema order and read by position: a read by
    /// name looks the column up case-insensitively, per column and row (an upload reads every
    /// row it sends this way).
    static func fetch(_ db: Database, _ table: TableSchema, key: RowKey) throws -> [String: FieldValue]? {
        let columns = table.valueColumns
        guard let row = try Row.fetchOne(db.cachedStatement(sql: StoreSQL.selectValues(table)), arguments: [key.databaseValue]) else {
            return nil
        }
        var fields: [String: FieldValue] = [:]
        fields.reserveCapacity(columns.count)
        for (index, column) in columns.enumerated() {
            fields[column.name] = FieldValue(row[index] as DatabaseValue)
        }
        return fields
    }

    /// The value columns of a fetched row.
    static func fields(of row: Row, _ table: TableSchema) -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        for column in table.valueColumns {
            fields[column.name] = FieldValue(row[column.name] as DatabaseValue? ?? .null)
        }
        return fields
    }

    static func insert(_ db: Database, _ table: TableSchema, key: RowKey, fields: [String: FieldValue]) throws {
        let columns = fields.keys.sorted()
        let names = ([table.primaryKey] + columns).map(StoreSQL.quote).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
        let sql = "INSERT INTO \(StoreSQL.quote(table.name)) (\(names)) VALUES (\(marks))"
        // Existentials, not [DatabaseValue]: GRDB's initializer for a sequence of a concrete
        // type maps with a key path, instantiated on every call (half of this function's time
        // in a bootstrap, BENCHMARKS.md).
        var arguments: [(any DatabaseValueConvertible)?] = [key.databaseValue]
        arguments.reserveCapacity(columns.count + 1)
        for column in columns { arguments.append(fields[column]?.databaseValue ?? .null) }
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
    }

    /// Inserts the row, or sets `fields` of the row already there: an insert change's row write
    /// whether or not the row exists (``RowChange/write(rowExists:)``), in one statement.
    static func upsert(_ db: Database, _ table: TableSchema, key: RowKey, fields: [String: FieldValue]) throws {
        let columns = fields.keys.sorted()
        let sql = StoreSQL.upsertColumns(table, columns)
        var arguments: [(any DatabaseValueConvertible)?] = [key.databaseValue]
        arguments.reserveCapacity(columns.count + 1)
        for column in columns { arguments.append(fields[column]?.databaseValue ?? .null) }
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
    }

    /// Sets `fields` of an existing row; returns whether the row exists. A no-op returning
    /// true for an empty set (the caller knows the row exists).
    @discardableResult
    static func update(_ db: Database, _ table: TableSchema, key: RowKey, fields: [String: FieldValue]) throws -> Bool {
        guard !fields.isEmpty else { return true }
        let columns = fields.keys.sorted()
        let sql = StoreSQL.updateColumns(table, columns)
        var arguments: [(any DatabaseValueConvertible)?] = columns.map { fields[$0]?.databaseValue ?? .null }
        arguments.append(key.databaseValue)
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
        return db.changesCount > 0
    }

    /// Deletes the row; returns whether it existed.
    @discardableResult
    static func delete(_ db: Database, _ table: TableSchema, key: RowKey) throws -> Bool {
        try db.cachedStatement(sql: StoreSQL.deleteRow(table)).execute(arguments: [key.databaseValue])
        return db.changesCount > 0
    }
}
