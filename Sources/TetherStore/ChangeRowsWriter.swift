import GRDB
import GRDBSQLite
import TetherProtocol

/// Writes ``ChangeRows`` into a store's tables in place: every value bound straight from the
/// received bytes into a statement prepared once per table and column set — no dictionary,
/// `String` or ``FieldValue`` per row. The rows are checked against the schema first, all of
/// them (``SchemaFit/check(_:in:)``: unknown table or column, a key or value of the wrong
/// type, a non-nullable column without a value), so a change that does not fit writes nothing.
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
        /// Per column of the rows' dictionary (``SchemaFit/positions(of:in:)``): 0 when the
        /// table has no such column, 1 for the primary key, otherwise the parameter of its
        /// value in the whole-row upsert.
        let parameters: [Int32]
        let valueColumns: [ColumnSchema]
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

    /// Checks every change of `rows` against the schema.
    func check(_ rows: ChangeRows) throws(StoreError) {
        do { try SchemaFit.check(rows, in: schema) } catch { throw StoreError(error) }
    }

    /// Writes every row of `rows` (state rows: inserts, each the whole row), already checked
    /// against this writer's schema (``PartitionStore/checkStateRows(_:)``).
    mutating func writeCheckedStateRows(_ rows: StateRows) throws {
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

    /// Writes the change the cursor is at (its fields not read yet), of rows ``check(_:)`` passed.
    mutating func write(
        _ kind: RowChange.Kind, table tableIndex: Int, key: ChangeRows.Value, _ cursor: inout ChangeRows.Cursor, _ rows: ChangeRows
    ) throws -> Outcome {
        let plan = try plan(tableIndex, rows)
        let table = plan.table
        fields.removeAll(keepingCapacity: true)
        while cursor.fieldsLeft > 0 {
            let (column, value) = cursor.nextField()
            let parameter = plan.parameters[column]
            if parameter > 1 { fields.append((parameter, value)) }  // the key, if carried, is the change's
        }
        if kind == .delete {
            return try step(ready(plan.delete), key: key, at: 1) ? .applied : .skipped
        }
        if fields.isEmpty, !(kind == .insert && inserts == .wholeRows) {
            let change = RowChange(table: table.name, key: key.rowKey, kind: kind)
            return .decoded(try ChangeValidator.change(change, in: schema))
        }
        if kind == .insert, inserts == .wholeRows || fields.count == plan.valueColumns.count {
            let statement = ready(plan.wholeRow)
            for (parameter, value) in fields { try check(bind(value, to: statement, at: parameter)) }
            _ = try step(statement, key: key, at: 1)
            return .applied
        }
        // Some of the columns: their statement, the columns bound in schema order.
        fields.sort { $0.parameter < $1.parameter }
        let columns = fields.map { plan.valueColumns[Int($0.parameter) - 2].name }
        if kind == .insert {
            let statement = try db.cachedStatement(sql: StoreSQL.upsertColumns(table, columns))
            let raw = ready(statement)
            for (index, field) in fields.enumerated() { try check(bind(field.value, to: raw, at: Int32(index + 2))) }
            _ = try step(raw, key: key, at: 1)
            return .applied
        }
        let statement = try db.cachedStatement(sql: StoreSQL.updateColumns(table, columns))
        let raw = ready(statement)
        for (index, field) in fields.enumerated() { try check(bind(field.value, to: raw, at: Int32(index + 1))) }
        return try step(raw, key: key, at: Int32(fields.count + 1)) ? .applied : .skipped
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
        let plan = Plan(
            table: table, parameters: SchemaFit.positions(of: rows.columns, in: table), valueColumns: table.valueColumns,
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
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

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
        case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
        case .null, .real, .blob: preconditionFailure("a change's key is an integer or a text (checked when decoded)")
        }
    }
}
