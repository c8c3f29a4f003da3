import GRDB
import GRDBSQLite
import TetherProtocol

/// Writes ``ChangeRows`` into a store's tables in place: every value bound straight from the
/// received bytes into a statement prepared once per table and column set — no dictionary,
/// `String` or ``FieldValue`` per row. Each change is checked against the schema by the rules of
/// ``SchemaFit`` (unknown table or column, a key or value of the wrong type, a non-nullable
/// column without a value) before it is written.
///
/// - State rows (``Inserts/wholeRows``): each row is the whole row, written by the table's
///   whole-row upsert; a nullable column the row leaves out is null.
/// - Downloaded changes (``Inserts/merged``): an insert carrying every column is the whole-row
///   upsert too; one leaving nullable columns out is an upsert of the columns it carries (a row
///   already there keeps the others); an update sets the columns it carries; a delete deletes.
///   Whether an update or a delete found its row says whether it was applied or skipped.
struct ChangeRowsWriter {
    enum Inserts { case wholeRows, merged }

    /// What writing one change did.
    enum Outcome {
        case applied, skipped
        /// Not written here (an insert or update that carries no value column): the change,
        /// checked, for the row-apply rules.
        case decoded(RowChange)
    }

    /// One table of the rows being written: where each of the rows' columns goes.
    private struct Plan {
        let table: TableSchema
        let keyType: ColumnType
        /// Per column of the rows' dictionary: 0 when the table has no such column, 1 for the
        /// primary key, otherwise the position of the value column + 2 (its parameter in the
        /// whole-row upsert).
        let parameters: [Int32]
        let valueColumns: [ColumnSchema]
        /// The parameters of the columns that are not nullable.
        let required: [Int32]
        /// The table's whole-row upsert (key, then every value column) and its delete (held
        /// here: GRDB's cache may let go of a statement while it is in use).
        let wholeRow: Statement
        let delete: Statement
    }

    private let db: Database
    private let schema: Schema
    private let inserts: Inserts
    private var plans: [Plan?] = []
    /// The fields of the change being written, as read: parameter and value.
    private var fields: [(parameter: Int32, value: ChangeRows.Value)] = []

    init(db: Database, schema: Schema, inserts: Inserts) {
        self.db = db
        self.schema = schema
        self.inserts = inserts
    }

    /// Writes every row of `rows` (state rows: inserts, each the whole row).
    mutating func writeStateRows(_ rows: StateRows) throws {
        precondition(inserts == .wholeRows, "state rows are written whole")
        begin(rows)
        try rows.withCursor { (cursor) throws in
            while let (kind, table, key) = cursor.nextChange() {
                _ = try write(kind, table: table, key: key, &cursor, rows)
            }
        }
    }

    /// Starts on `rows`, whose dictionaries the next changes refer to.
    mutating func begin(_ rows: ChangeRows) {
        plans = Array(repeating: nil, count: rows.tables.count)
    }

    /// Writes the change the cursor is at (its fields not read yet).
    mutating func write(
        _ kind: RowChange.Kind, table tableIndex: Int, key: ChangeRows.Value, _ cursor: inout ChangeRows.Cursor, _ rows: ChangeRows
    ) throws -> Outcome {
        let plan = try plan(tableIndex, rows)
        let table = plan.table
        switch (key, plan.keyType) {
        case (.integer, .integer), (.text, .text): break
        default: throw StoreError.typeMismatch(table: table.name, column: table.primaryKey, expected: plan.keyType.rawValue, found: key.typeName)
        }
        try readFields(&cursor, key: key, plan, rows.columns)
        if kind == .delete {
            return try step(ready(plan.delete), key: key, at: 1) ? .applied : .skipped
        }
        if fields.isEmpty, !(kind == .insert && inserts == .wholeRows) {
            let change = RowChange(table: table.name, key: key.rowKey, kind: kind)
            return .decoded(try ChangeValidator.change(change, in: schema))
        }
        if kind == .insert {
            for parameter in plan.required where !fields.contains(where: { $0.parameter == parameter }) {
                throw StoreError.missingValue(table: table.name, column: plan.valueColumns[Int(parameter) - 2].name)
            }
            if inserts == .wholeRows || fields.count == plan.valueColumns.count {
                let statement = ready(plan.wholeRow)
                for (parameter, value) in fields { try check(bind(value, to: statement, at: parameter)) }
                _ = try step(statement, key: key, at: 1)
                return .applied
            }
        }
        // Some of the columns: their statement, the columns bound in schema order.
        fields.sort { $0.parameter < $1.parameter }
        let columns = fields.map { plan.valueColumns[Int($0.parameter) - 2] }
        if kind == .insert {
            let statement = try db.cachedStatement(sql: StoreSQL.upsertColumns(table, columns))
            for (index, field) in fields.enumerated() { try check(bind(field.value, to: ready(statement), at: Int32(index + 2))) }
            _ = try step(ready(statement), key: key, at: 1)
            return .applied
        }
        let statement = try db.cachedStatement(sql: StoreSQL.updateColumns(table, columns))
        for (index, field) in fields.enumerated() { try check(bind(field.value, to: ready(statement), at: Int32(index + 1))) }
        return try step(ready(statement), key: key, at: Int32(fields.count + 1)) ? .applied : .skipped
    }

    /// Reads the change's fields into ``fields``, each checked against its column.
    private mutating func readFields(_ cursor: inout ChangeRows.Cursor, key: ChangeRows.Value, _ plan: Plan, _ columns: [String]) throws {
        fields.removeAll(keepingCapacity: true)
        let table = plan.table
        while cursor.fieldsLeft > 0 {
            let (column, value) = cursor.nextField()
            let parameter = plan.parameters[column]
            if parameter == 0 { throw StoreError.unknownColumn(table: table.name, column: columns[column]) }
            if parameter == 1 {
                guard Self.same(value, key) else {
                    throw StoreError.typeMismatch(table: table.name, column: table.primaryKey, expected: "the change's key", found: "a different key")
                }
                continue
            }
            let schemaColumn = plan.valueColumns[Int(parameter) - 2]
            if case .null = value {
                guard schemaColumn.nullable else { throw StoreError.missingValue(table: table.name, column: schemaColumn.name) }
            } else if !Self.fits(value, schemaColumn.type) {
                throw StoreError.typeMismatch(table: table.name, column: schemaColumn.name, expected: schemaColumn.typeSpelling, found: value.typeName)
            }
            fields.append((parameter, value))
        }
    }

    /// The change the cursor is at, decoded and checked (for the row-apply rules of a row with
    /// pending local changes).
    mutating func decode(
        _ kind: RowChange.Kind, table tableIndex: Int, key: ChangeRows.Value, _ cursor: inout ChangeRows.Cursor, _ rows: ChangeRows
    ) throws -> RowChange {
        var values: [String: FieldValue] = [:]
        while cursor.fieldsLeft > 0 {
            let (column, value) = cursor.nextField()
            values[rows.columns[column]] = value.fieldValue
        }
        let change = RowChange(table: rows.tables[tableIndex], key: key.rowKey, kind: kind, fields: values)
        return try ChangeValidator.change(change, in: schema)
    }

    private mutating func plan(_ index: Int, _ rows: ChangeRows) throws -> Plan {
        if let plan = plans[index] { return plan }
        let table = try ChangeValidator.table(rows.tables[index], in: schema)
        guard let keyColumn = table.primaryKeyColumn else { throw StoreError.unknownTable(table: table.name) }
        let valueColumns = table.valueColumns
        let parameters = rows.columns.map { name -> Int32 in
            if name == table.primaryKey { return 1 }
            guard let position = valueColumns.firstIndex(where: { $0.name == name }) else { return 0 }
            return Int32(position + 2)
        }
        let required = valueColumns.indices.filter { !valueColumns[$0].nullable }.map { Int32($0 + 2) }
        let plan = Plan(
            table: table, keyType: keyColumn.type, parameters: parameters, valueColumns: valueColumns, required: required,
            wholeRow: try db.cachedStatement(sql: StoreSQL.upsertWholeRow(table)),
            delete: try db.cachedStatement(sql: StoreSQL.deleteRow(table)))
        plans[index] = plan
        return plan
    }

    /// The statement, reset: GRDB, which runs the same cached statements elsewhere (the
    /// row-apply rules' writes), resets a statement before its next run, not after its last.
    private func ready(_ statement: Statement) -> SQLiteStatement {
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        return raw
    }

    /// Binds the key, runs the statement and clears it (no pointer into the rows stays bound);
    /// returns whether it changed a row.
    private func step(_ statement: SQLiteStatement, key: ChangeRows.Value, at index: Int32) throws -> Bool {
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try check(bind(key, to: statement, at: index))
        let code = sqlite3_step(statement)
        if code != SQLITE_DONE { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage) }
        return db.changesCount > 0
    }

    /// Whether a value may be stored in a column of `type` (``FieldValue/fits(_:)``).
    private static func fits(_ value: ChangeRows.Value, _ type: ColumnType) -> Bool {
        switch (value, type) {
        case (.null, _): true
        case (.integer, .integer), (.integer, .real): true
        case (.integer(let v), .boolean): v == 0 || v == 1
        case (.real, .real), (.text, .text), (.blob, .blob): true
        default: false
        }
    }

    private static func same(_ a: ChangeRows.Value, _ b: ChangeRows.Value) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): x == y
        case (.text(let x), .text(let y)): x.elementsEqual(y)
        default: false
        }
    }

    /// Binds a value that lives in the rows (SQLITE_STATIC: the rows outlive the step).
    private func bind(_ value: ChangeRows.Value, to statement: SQLiteStatement, at index: Int32) -> Int32 {
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

extension ChangeRows.Value {
    /// A key's value (an integer or a text: the decoder accepts no other key).
    var rowKey: RowKey {
        switch self {
        case .integer(let v): .integer(v)
        default: .text(String(decoding: textBytes, as: UTF8.self))
        }
    }

    private var textBytes: UnsafeBufferPointer<UInt8> {
        if case .text(let bytes) = self { return bytes }
        return UnsafeBufferPointer(start: nil, count: 0)
    }
}
