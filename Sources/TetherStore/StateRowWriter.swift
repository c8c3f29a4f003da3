import GRDB
import GRDBSQLite
import TetherProtocol

/// Writes ``StateRows`` into a store's tables in place: one prepared whole-row upsert per
/// table (``StoreSQL/upsertWholeRow(_:)``), every value bound straight from the chunk's bytes —
/// no dictionary, `String` or ``FieldValue`` per row. Each row is checked against the schema
/// by the rules of ``SchemaFit`` (unknown table or column, a key or value of the wrong type, a
/// non-nullable column without a value) before it is written; a nullable column the row
/// leaves out is null.
struct StateRowWriter {
    /// One table's statement and where each of the chunk's columns is bound in it.
    private struct Plan {
        let table: TableSchema
        let statement: SQLiteStatement
        let keyType: ColumnType
        /// Per column of the chunk's dictionary: 0 when the table has no such column, 1 for
        /// the primary key, otherwise the parameter its value is bound to.
        let parameters: [Int32]
        /// The value column of each parameter from 2 on.
        let valueColumns: [ColumnSchema]
        /// The parameters of the columns that are not nullable.
        let required: [Int32]
    }

    private let db: Database
    private let schema: Schema
    private var plans: [Plan?]
    /// The row in which each parameter was last bound.
    private var boundIn: [Int]
    private var row = 0

    init(db: Database, schema: Schema, rows: StateRows) {
        self.db = db
        self.schema = schema
        plans = Array(repeating: nil, count: rows.tables.count)
        boundIn = []
    }

    /// Writes every row of `rows`.
    mutating func write(_ rows: StateRows) throws {
        let columns = rows.columns
        try rows.withCursor { (cursor) throws in
            while let (tableIndex, key) = cursor.nextRow() {
                let plan = try plan(tableIndex, rows)
                try write(&cursor, key: key, plan, columns)
            }
        }
    }

    private mutating func write(_ cursor: inout StateRows.Cursor, key: StateRows.Value, _ plan: Plan, _ columns: [String]) throws {
        let statement = plan.statement
        row += 1
        sqlite3_clear_bindings(statement)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)  // no pointer into the chunk stays bound
        }
        switch (key, plan.keyType) {
        case (.integer, .integer), (.text, .text): try check(bind(key, to: statement, at: 1))
        default:
            throw StoreError.typeMismatch(
                table: plan.table.name, column: plan.table.primaryKey, expected: plan.keyType.rawValue, found: key.typeName)
        }
        while cursor.fieldsLeft > 0 {
            let (column, value) = cursor.nextField()
            let parameter = plan.parameters[column]
            if parameter == 0 { throw StoreError.unknownColumn(table: plan.table.name, column: columns[column]) }
            if parameter == 1 {
                guard Self.same(value, key) else {
                    throw StoreError.typeMismatch(table: plan.table.name, column: plan.table.primaryKey, expected: "the change's key", found: "a different key")
                }
                continue
            }
            let schemaColumn = plan.valueColumns[Int(parameter) - 2]
            if case .null = value {
                guard schemaColumn.nullable else { throw StoreError.missingValue(table: plan.table.name, column: schemaColumn.name) }
            } else if !Self.fits(value, schemaColumn.type) {
                throw StoreError.typeMismatch(
                    table: plan.table.name, column: schemaColumn.name, expected: schemaColumn.typeSpelling, found: value.typeName)
            }
            boundIn[Int(parameter)] = row
            try check(bind(value, to: statement, at: parameter))
        }
        for parameter in plan.required where boundIn[Int(parameter)] != row {
            throw StoreError.missingValue(table: plan.table.name, column: plan.valueColumns[Int(parameter) - 2].name)
        }
        let code = sqlite3_step(statement)
        if code != SQLITE_DONE { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage) }
    }

    private mutating func plan(_ index: Int, _ rows: StateRows) throws -> Plan {
        if let plan = plans[index] { return plan }
        let table = try ChangeValidator.table(rows.tables[index], in: schema)
        guard let keyColumn = table.primaryKeyColumn else { throw StoreError.unknownTable(table: table.name) }
        let valueColumns = table.valueColumns
        let statement = try db.cachedStatement(sql: StoreSQL.upsertWholeRow(table))
        let parameters = rows.columns.map { name -> Int32 in
            if name == table.primaryKey { return 1 }
            guard let position = valueColumns.firstIndex(where: { $0.name == name }) else { return 0 }
            return Int32(position + 2)
        }
        let required = valueColumns.indices.filter { !valueColumns[$0].nullable }.map { Int32($0 + 2) }
        if boundIn.count < valueColumns.count + 2 { boundIn += Array(repeating: 0, count: valueColumns.count + 2 - boundIn.count) }
        let plan = Plan(
            table: table, statement: statement.sqliteStatement, keyType: keyColumn.type, parameters: parameters,
            valueColumns: valueColumns, required: required)
        plans[index] = plan
        return plan
    }

    /// Whether a value may be stored in a column of `type` (``FieldValue/fits(_:)``).
    private static func fits(_ value: StateRows.Value, _ type: ColumnType) -> Bool {
        switch (value, type) {
        case (.null, _): true
        case (.integer, .integer), (.integer, .real): true
        case (.integer(let v), .boolean): v == 0 || v == 1
        case (.real, .real), (.text, .text), (.blob, .blob): true
        default: false
        }
    }

    private static func same(_ a: StateRows.Value, _ b: StateRows.Value) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): x == y
        case (.text(let x), .text(let y)): x.elementsEqual(y)
        default: false
        }
    }

    /// Binds a value that lives in the chunk (SQLITE_STATIC: the chunk outlives the step).
    private func bind(_ value: StateRows.Value, to statement: SQLiteStatement, at index: Int32) -> Int32 {
        switch value {
        case .null: return sqlite3_bind_null(statement, index)
        case .integer(let v): return sqlite3_bind_int64(statement, index, v)
        case .real(let v): return sqlite3_bind_double(statement, index, v)
        case .text(let bytes):
            // An empty text must not be bound from a null pointer (that binds NULL).
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(statement, index, "", 0, Self.transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { sqlite3_bind_text(statement, index, $0, Int32(bytes.count), nil) }
        case .blob(let bytes):
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, index, 0) }
            return sqlite3_bind_blob(statement, index, base, Int32(bytes.count), nil)
        }
    }

    /// SQLITE_TRANSIENT: SQLite copies the value (a macro, not visible to Swift).
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private func check(_ code: Int32) throws {
        guard code != SQLITE_OK else { return }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
    }
}
