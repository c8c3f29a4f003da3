import TetherProtocol

/// Checks changes and state rows against the schema before anything is written, by the rules
/// the server checks uploads with (``SchemaFit``), and normalizes their values to what the
/// columns store (integers in `real` columns become reals).
enum ChangeValidator {
    static func table(_ name: String, in schema: Schema) throws(StoreError) -> TableSchema {
        do { return try SchemaFit.table(name, in: schema) } catch { throw StoreError(error) }
    }

    static func checkKey(_ key: RowKey, of table: TableSchema) throws(StoreError) {
        do { try SchemaFit.checkKey(key, of: table) } catch { throw StoreError(error) }
    }

    /// Validated and normalized fields; with `complete`, every non-nullable column must have a
    /// value (inserts, state rows).
    static func fields(
        _ fields: [String: FieldValue], key: RowKey, of table: TableSchema, complete: Bool
    ) throws(StoreError) -> [String: FieldValue] {
        do { return try SchemaFit.fields(fields, key: key, of: table, complete: complete) } catch { throw StoreError(error) }
    }

    /// The change, validated and normalized.
    static func change(_ change: RowChange, in schema: Schema) throws(StoreError) -> RowChange {
        do { return try SchemaFit.change(change, in: schema) } catch { throw StoreError(error) }
    }
}

extension StoreError {
    init(_ problem: SchemaFit.Problem) {
        self = switch problem {
        case .unknownTable(let table): .unknownTable(table: table)
        case .unknownColumn(let table, let column): .unknownColumn(table: table, column: column)
        case .typeMismatch(let table, let column, let expected, let found):
            .typeMismatch(table: table, column: column, expected: expected, found: found)
        case .missingValue(let table, let column): .missingValue(table: table, column: column)
        }
    }
}
