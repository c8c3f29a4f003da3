/// The one definition of what a store accepts: whether a change or a state row fits a schema,
/// and each value as its column stores it. The agent writes nothing that fails it, and the
/// server refuses (225) an upload that fails it — so every upload the server accepts is one
/// every agent can apply.
package enum SchemaFit {
    package enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        case unknownTable(table: String)
        case unknownColumn(table: String, column: String)
        /// A value does not fit its column (`expected` is the schema spelling, `found` the
        /// value's type, never the value itself).
        case typeMismatch(table: String, column: String, expected: String, found: String)
        /// A row lacks a value for a column that is not nullable (or carries null for it).
        case missingValue(table: String, column: String)

        package var description: String {
            switch self {
            case .unknownTable(let table): "table \(table) is not in the schema"
            case .unknownColumn(let table, let column): "column \(table).\(column) is not in the schema"
            case .typeMismatch(let table, let column, let expected, let found): "\(table).\(column) expects \(expected), got \(found)"
            case .missingValue(let table, let column): "\(table).\(column) is not nullable and has no value"
            }
        }
    }

    package static func table(_ name: String, in schema: Schema) throws(Problem) -> TableSchema {
        guard let table = schema.table(name) else { throw .unknownTable(table: name) }
        return table
    }

    package static func checkKey(_ key: RowKey, of table: TableSchema) throws(Problem) {
        guard let column = table.primaryKeyColumn else { throw .unknownTable(table: table.name) }
        guard key.fits(column.type) else {
            throw .typeMismatch(table: table.name, column: column.name, expected: column.typeSpelling, found: key.typeName)
        }
    }

    /// Validated and normalized fields. The primary key, if carried, must equal `key` and is
    /// dropped. With `complete`, every non-nullable column must have a value (inserts, state rows).
    package static func fields(
        _ fields: [String: FieldValue], key: RowKey, of table: TableSchema, complete: Bool
    ) throws(Problem) -> [String: FieldValue] {
        var result: [String: FieldValue] = [:]
        result.reserveCapacity(fields.count)
        for (name, value) in fields {
            guard let column = table.column(name) else { throw .unknownColumn(table: table.name, column: name) }
            if name == table.primaryKey {
                guard value == key.fieldValue else {
                    throw .typeMismatch(table: table.name, column: name, expected: "the change's key", found: "a different key")
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

    /// The change, validated and normalized: an insert must carry every non-nullable column.
    package static func change(_ change: RowChange, in schema: Schema) throws(Problem) -> RowChange {
        let table = try table(change.table, in: schema)
        try checkKey(change.key, of: table)
        var normalized = change
        normalized.fields = try fields(change.fields, key: change.key, of: table, complete: change.kind == .insert)
        return normalized
    }
}

extension FieldValue {
    /// The value's type name, for error messages (never the value itself).
    package var typeName: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }

    /// The value as a column of `type` stores it: integers in `real` columns become reals
    /// (SQLite's REAL affinity does the same), so comparisons and dumps see what is stored.
    package func normalized(for type: ColumnType) -> FieldValue {
        if case .integer(let v) = self, type == .real { return .real(Double(v)) }
        return self
    }
}

extension RowKey {
    /// Whether the key fits a primary key column of `type` (integer or text, exactly).
    package func fits(_ type: ColumnType) -> Bool {
        switch (self, type) {
        case (.integer, .integer), (.text, .text): true
        default: false
        }
    }

    package var typeName: String {
        switch self {
        case .integer: "integer"
        case .text: "text"
        }
    }
}
