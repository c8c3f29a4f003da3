import GRDB
import GRDBSQLite
import TetherProtocol

/// Reads an upload batch from the change log straight into the wire's encoding
/// (``ChangeRowsBuilder``): each logged row's values read once, by position, and written in
/// their wire form — no `RowChange`, dictionary or `String` per row value. The changes of one
/// row in the batch are folded into one, placed where the row first appears (docs/store.md,
/// *The change log*): the rules of ``LogEntry/change(row:held:)`` for each entry (an insert or
/// update of a row gone since says nothing, unless values were held for an update), then
/// ``RowChange/followed(by:)`` between them.
struct UploadBatchReader {
    /// A table of the batch: its schema (nil when the schema no longer has it), its index in the
    /// batch's table dictionary, its value columns' indices in the column dictionary (-1 until
    /// first used) and its statement reading a row's value columns in schema order.
    private struct TablePlan {
        let table: TableSchema?
        let index: Int
        var columns: [Int]
        let select: Statement?
    }

    /// One row of the batch and its net change so far.
    private struct Slot {
        let plan: Int
        let key: RowKey
        var kind: RowChange.Kind?
        /// Where the row's values are (``offsets`` from this index, one more than its value
        /// columns), or nil when the row does not exist.
        let values: Int?
        /// What ``HeldValues`` kept for a row that does not exist.
        let held: [String: FieldValue]?
        /// Where the row's flags "changed by a net update" start in ``updated``.
        let updated: Int
    }

    private let db: Database
    private let schema: Schema
    private var builder = ChangeRowsBuilder()
    private var plans: [TablePlan] = []
    private var planIndex: [String: Int] = [:]
    private var slots: [Slot] = []
    private var slotIndex: [LoggedRow: Int] = [:]
    private var values = ValueWriter()
    private var offsets: [Int] = []
    private var updated: [Bool] = []

    private init(db: Database, schema: Schema) {
        self.db = db
        self.schema = schema
    }

    /// The entries with `seq > after`, up to `limit` entries and about `maxBytes` of values (the
    /// entry that reaches it is the last; the first is always taken), as changes with the rows'
    /// values now, with the seq range they cover; nil when there is none.
    static func read(
        _ db: Database, schema: Schema, after: Int64, limit: Int, maxBytes: Int
    ) throws -> (first: Int64, last: Int64, changes: ChangeRows)? {
        var reader = UploadBatchReader(db: db, schema: schema)
        var range: (first: Int64, last: Int64)?
        var read = 0
        // A page of entries at a time, so a byte-limited batch reads little more than it sends.
        pages: while read < limit {
            let page = try ChangeLog.entries(db, after: range?.last ?? after, limit: min(limit - read, 256))
            if page.isEmpty { break }
            for entry in page {
                read += 1
                range = (range?.first ?? entry.seq, entry.seq)
                try reader.add(entry)
                if reader.values.count >= maxBytes { break pages }
            }
        }
        guard let range else { return nil }
        return (range.first, range.last, reader.build())
    }

    private mutating func add(_ entry: LogEntry) throws {
        let id = entry.row
        let index: Int
        if let known = slotIndex[id] {
            index = known
        } else {
            index = try newSlot(entry)
            slotIndex[id] = index
        }
        var slot = slots[index]
        switch entry.kind {
        case .insert:
            guard slot.values != nil else { return }  // gone since: its removal follows
            slot.kind = .insert
        case .update:
            guard slot.values != nil || slot.held != nil else { return }
            switch slot.kind {
            case .delete: return  // an update of a deleted row is ignored
            case .insert: break  // an insert carries every column
            case .update, nil:
                slot.kind = .update
                guard let table = plans[slot.plan].table else { break }
                for name in entry.columns {
                    if let position = table.valueColumns.firstIndex(where: { $0.name == name }) { updated[slot.updated + position] = true }
                }
            }
        case .delete:
            slot.kind = .delete
        }
        slots[index] = slot
    }

    private mutating func newSlot(_ entry: LogEntry) throws -> Int {
        let plan = try plan(entry.table)
        let columns = plans[plan].table?.valueColumns.count ?? 0
        var start: Int?
        if let select = plans[plan].select, try readRow(select, key: entry.key, columns: columns) {
            start = offsets.count - columns - 1
        }
        let held = start == nil ? try HeldValues.fields(db, entry.row) : nil
        slots.append(Slot(plan: plan, key: entry.key, kind: nil, values: start, held: held, updated: updated.count))
        updated.append(contentsOf: repeatElement(false, count: columns))
        return slots.count - 1
    }

    /// Reads the row's value columns into ``values`` (their offsets appended); false when the
    /// row does not exist.
    private mutating func readRow(_ select: Statement, key: RowKey, columns: Int) throws -> Bool {
        let statement = select.sqliteStatement
        sqlite3_reset(statement)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        let bound = key.bind(to: statement, at: 1)
        if bound != SQLITE_OK { throw DatabaseError(resultCode: ResultCode(rawValue: bound), message: db.lastErrorMessage) }
        let code = sqlite3_step(statement)
        if code == SQLITE_DONE { return false }
        if code != SQLITE_ROW { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage) }
        offsets.append(values.count)
        for column in 0..<Int32(columns) {
            values.column(statement, column)
            offsets.append(values.count)
        }
        return true
    }

    private mutating func plan(_ name: String) throws -> Int {
        if let known = planIndex[name] { return known }
        let table = schema.table(name)
        let select = try table.map { try db.cachedStatement(sql: StoreSQL.selectValues($0)) }
        plans.append(TablePlan(
            table: table, index: builder.table(name), columns: Array(repeating: -1, count: table?.valueColumns.count ?? 0), select: select))
        planIndex[name] = plans.count - 1
        return plans.count - 1
    }

    /// The batch: each row's net change, in the order the rows first appear.
    private mutating func build() -> ChangeRows {
        for slot in slots {
            guard let kind = slot.kind else { continue }
            let plan = plans[slot.plan]
            let columns = plan.table?.valueColumns ?? []
            switch kind {
            case .delete:
                builder.change(.delete, table: plan.index, key: slot.key, fieldCount: 0)
            case .insert:
                guard let start = slot.values else { continue }
                builder.change(.insert, table: plan.index, key: slot.key, fieldCount: columns.count)
                for position in columns.indices {
                    builder.field(column(slot.plan, position), encoded: values[offsets[start + position]..<offsets[start + position + 1]])
                }
            case .update:
                let changed = columns.indices.filter { updated[slot.updated + $0] }
                if let start = slot.values {
                    builder.change(.update, table: plan.index, key: slot.key, fieldCount: changed.count)
                    for position in changed {
                        builder.field(column(slot.plan, position), encoded: values[offsets[start + position]..<offsets[start + position + 1]])
                    }
                } else {
                    let held = slot.held ?? [:]
                    let kept = changed.filter { held[columns[$0].name] != nil }
                    builder.change(.update, table: plan.index, key: slot.key, fieldCount: kept.count)
                    for position in kept { builder.field(column(slot.plan, position), held[columns[position].name]!) }
                }
            }
        }
        return builder.build()
    }

    /// The column dictionary index of a table's value column (added on first use).
    private mutating func column(_ plan: Int, _ position: Int) -> Int {
        if plans[plan].columns[position] < 0, let table = plans[plan].table {
            plans[plan].columns[position] = builder.column(table.valueColumns[position].name)
        }
        return plans[plan].columns[position]
    }
}
