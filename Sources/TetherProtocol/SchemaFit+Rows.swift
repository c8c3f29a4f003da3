/// The rules of ``SchemaFit/change(_:in:)`` for changes read in place (``ChangeRows``): the
/// server checks uploads and the agent downloads and state rows with them, without making a
/// ``RowChange`` of each.
extension SchemaFit {
    /// Where each column of a changes' dictionary goes in `table`: 0 when the table has no such
    /// column, 1 for its primary key, otherwise the value column's position + 2 (its parameter
    /// in ``TableSchema/valueColumns`` order after the key).
    package static func positions(of columns: [String], in table: TableSchema) -> [Int32] {
        let valueColumns = table.valueColumns
        return columns.map { name -> Int32 in
            if name == table.primaryKey { return 1 }
            guard let position = valueColumns.firstIndex(where: { $0.name == name }) else { return 0 }
            return Int32(position + 2)
        }
    }

    /// Checks every change of `rows` against `schema`: a known table, a key of its key's type,
    /// known columns, values that fit them (null only in nullable ones), a carried key equal to
    /// the change's, and for an insert every non-nullable column. Throws the first problem.
    package static func check(_ rows: ChangeRows, in schema: Schema) throws(Problem) {
        // Per table of the dictionary, looked up once (``TableSchema/valueColumns`` is computed:
        // read per field it would allocate an array per value).
        var tables: [(table: TableSchema, valueColumns: [ColumnSchema], keyType: ColumnType, positions: [Int32], required: [Int32])?] =
            Array(repeating: nil, count: rows.tables.count)
        // The change in which each position was last set (inserts' completeness).
        var setIn: [Int] = []
        var change = 0
        try rows.withCursor { (cursor) throws(Problem) in
            while let (kind, tableIndex, key) = cursor.nextChange() {
                change += 1
                if tables[tableIndex] == nil {
                    let table = try Self.table(rows.tables[tableIndex], in: schema)
                    guard let keyColumn = table.primaryKeyColumn else { throw .unknownTable(table: table.name) }
                    let valueColumns = table.valueColumns
                    let required = valueColumns.indices.filter { !valueColumns[$0].nullable }.map { Int32($0 + 2) }
                    tables[tableIndex] = (table, valueColumns, keyColumn.type, positions(of: rows.columns, in: table), required)
                    if setIn.count < valueColumns.count + 2 { setIn += Array(repeating: 0, count: valueColumns.count + 2 - setIn.count) }
                }
                let (table, valueColumns, keyType, positions, required) = tables[tableIndex]!
                switch (key, keyType) {
                case (.integer, .integer), (.text, .text): break
                default: throw .typeMismatch(table: table.name, column: table.primaryKey, expected: keyType.rawValue, found: key.typeName)
                }
                while cursor.fieldsLeft > 0 {
                    let (column, value) = cursor.nextField()
                    let position = positions[column]
                    if position == 0 { throw .unknownColumn(table: table.name, column: rows.columns[column]) }
                    if position == 1 {
                        guard value.isSameKey(as: key) else {
                            throw .typeMismatch(table: table.name, column: table.primaryKey, expected: "the change's key", found: "a different key")
                        }
                        continue
                    }
                    let schemaColumn = valueColumns[Int(position) - 2]
                    if case .null = value {
                        guard schemaColumn.nullable else { throw .missingValue(table: table.name, column: schemaColumn.name) }
                    } else if !value.fits(schemaColumn.type) {
                        throw .typeMismatch(table: table.name, column: schemaColumn.name, expected: schemaColumn.typeSpelling, found: value.typeName)
                    }
                    setIn[Int(position)] = change
                }
                if kind == .insert {
                    for position in required where setIn[Int(position)] != change {
                        throw .missingValue(table: table.name, column: valueColumns[Int(position) - 2].name)
                    }
                }
            }
        }
    }
}

extension ChangeRows.Value {
    /// Whether the value may be stored in a column of `type` (``FieldValue/fits(_:)``).
    package func fits(_ type: ColumnType) -> Bool {
        switch (self, type) {
        case (.null, _): true
        case (.integer, .integer), (.integer, .real): true
        case (.integer(let v), .boolean): v == 0 || v == 1
        case (.real, .real), (.text, .text), (.blob, .blob): true
        default: false
        }
    }

    /// Whether a carried key field equals the change's key.
    package func isSameKey(as key: Self) -> Bool {
        switch (self, key) {
        case (.integer(let x), .integer(let y)): x == y
        case (.text(let x), .text(let y)): x.elementsEqual(y)
        default: false
        }
    }
}
