import TetherProtocol

/// Rewrites state rows made under one schema so they fit another (a breaking `schema
/// apply`). Devices reset to this state, so it must be valid under the new schema:
///
/// - rows of removed tables, and of tables whose primary key changed, are dropped;
/// - removed columns are dropped from every row;
/// - a value that no longer fits its column's type becomes null (nullable) or the type's
///   zero value (`0`, `0.0`, `""`, empty blob, `false`);
/// - a new non-nullable column gets the type's zero value.
package struct StateMigration: Sendable, Hashable {
    package var from: Schema
    package var to: Schema

    package init(from: Schema, to: Schema) {
        self.from = from
        self.to = to
    }

    /// The row's new fields, or nil when the row must be dropped.
    package func migrate(table: String, key: RowKey, fields: [String: FieldValue]) -> [String: FieldValue]? {
        guard let newTable = to.table(table), let keyColumn = newTable.primaryKeyColumn else { return nil }
        if let oldTable = from.table(table), oldTable.primaryKey != newTable.primaryKey { return nil }
        guard key.fieldValue.fits(keyColumn.type) else { return nil }
        var result: [String: FieldValue] = [:]
        for column in newTable.valueColumns {
            let value = fields[column.name] ?? .null
            if value.isNull {
                result[column.name] = column.nullable ? .null : Self.zero(column.type)
            } else if value.fits(column.type) {
                result[column.name] = value
            } else {
                result[column.name] = column.nullable ? .null : Self.zero(column.type)
            }
        }
        return result
    }

    static func zero(_ type: ColumnType) -> FieldValue {
        switch type {
        case .integer, .boolean: .integer(0)
        case .real: .real(0)
        case .text: .text("")
        case .blob: .blob([])
        }
    }
}
