import GRDB
import TetherProtocol

/// The whole-row upsert of each table (``StoreSQL/upsertWholeRow(_:)``: key, then every value
/// column in schema order), prepared once per table for one apply and bound positionally:
/// an insert that carries every column — what uploads send — is written without building SQL
/// text or arguments by column name.
struct WholeRowUpserts {
    private var statements: [String: Statement] = [:]

    /// Writes the row (`fields` holds every value column of `table`).
    mutating func upsert(_ db: Database, _ table: TableSchema, key: RowKey, fields: [String: FieldValue]) throws {
        let statement: Statement
        if let prepared = statements[table.name] {
            statement = prepared
        } else {
            statement = try db.makeStatement(sql: StoreSQL.upsertWholeRow(table))
            statements[table.name] = statement
        }
        var arguments: [(any DatabaseValueConvertible)?] = [key.databaseValue]
        arguments.reserveCapacity(table.valueColumns.count + 1)
        for column in table.valueColumns { arguments.append(fields[column.name]?.databaseValue ?? .null) }
        try statement.execute(arguments: StatementArguments(arguments))
    }
}
