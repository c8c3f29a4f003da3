import TetherProtocol

/// Checks changes and state rows against the schema before anything is written, and
/// normalizes their values to what the columns store (integers in `real` columns become reals).
enum ChangeValidator {
    static func table(_ name: String, in schema: Schema) throws(StoreError) -> TableSchema {
        guard let table = schema.table(name) else { throw .unknownTable(table: name) }
        return table
    }

    static func checkKey(_ key: RowKey, of table: TableSchema) throws(StoreError) {
        guard let column = table.primaryKeyColumn else { throw .unknownTable(table: table.name) }
        guard key.fits(column.type) else {
            throw .typeMismatch(table: table.name, column: column.name, expected: column.typeSpelling, found: key.typeName)
        }
    }

    /// Validated and normalized fields. The primary key, if carried, must equal `key` and is
    /// dropped. With `complete`, every non-nullable column must have a value (inserts, state rows).
    static func fields(
        _ fields: [String: FieldValue], key: RowKey, of table: TableSchema, complete: Bool
    ) throws(StoreError) -> [String: FieldValue] {
        var result: [String: FieldValue] = [:]
        result.reserveCapacity(fields.count)
        for (name, value) in fields {
            guard let column = table.column(name) else { throw .unknownColumn(table: table.name, column: name) }
            if name == table.primaryKey {
                guard value == key.fieldValue else {
                    throw .typeMismatch(
                        table: table.name, column: name, expected: "the change's key", found: "different key")
                }
                continue
            }
            if value.isNull {
                guard column.nullable else { throw .missingValue(table: table.name, column: name) }
            } else if !value.fits(column.type) {
                throw .typeMismatch(table: table.name, column: name, expected: column.typeSpelling, found: value.typeName)
            }
            result[name] = value.normalized(for: column.type)
        }
        if complete {
            for column in table.valueColumns where !column.nullable && result[column.name] == nil {
                throw .missingValue(table: table.name, column: column.name)
            }
        }
        return result
    }

    /// The change, validated and normalized.
    static func change(_ change: RowChange, in schema: Schema) throws(StoreError) -> RowChange {
        let table = try table(change.table, in: schema)
        try checkKey(change.key, of: table)
        var normalized = change
        normalized.fields = try fields(change.fields, key: change.key, of: table, complete: change.kind == .insert)
        return normalized
    }
}
