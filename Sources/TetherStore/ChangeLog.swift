import GRDB
import TetherProtocol

/// A change as recorded in the change log, with its local sequence number.
package struct LoggedChange: Sendable, Hashable {
    package var seq: Int64
    package var change: RowChange

    package init(seq: Int64, change: RowChange) {
        self.seq = seq
        self.change = change
    }
}

/// The change log (`_tether_log`) inside a database access: one entry per captured change,
/// naming the row and how it changed (an update also names its changed columns), never the
/// values — those are the row's own, read when the change is uploaded or replayed
/// (docs/store.md "Change log"). The capture triggers append to it; the agent reads, trims,
/// collapses and re-queues.
enum ChangeLog {
    /// Appends `change` with the next `seq` and returns it (a recovered change re-queued: its
    /// values were just written to the row).
    @discardableResult
    static func append(_ db: Database, _ change: RowChange) throws -> Int64 {
        let columns = change.kind == .update ? LogEntry.columnList(change.fields.keys.sorted()) : nil
        try db.cachedStatement(sql: "INSERT INTO _tether_log (tbl, pk, kind, cols) VALUES (?, ?, ?, ?)")
            .execute(arguments: [change.table, change.key.databaseValue, change.kind.rawValue, columns])
        return db.lastInsertedRowID
    }

    /// Up to `limit` entries with `seq > after`, in seq order (unreadable entries, not written
    /// by the triggers, are skipped).
    static func entries(_ db: Database, after: Int64, limit: Int) throws -> [LogEntry] {
        try entries(Row.fetchCursor(
            db.cachedStatement(sql: "SELECT seq, tbl, pk, kind, cols FROM _tether_log WHERE seq > ? ORDER BY seq LIMIT ?"),
            arguments: [after, limit]))
    }

    /// The readable entries of `rows` (columns `seq, tbl, pk, kind, cols`), in their order;
    /// entries the triggers did not write are skipped.
    static func entries(_ rows: RowCursor) throws -> [LogEntry] {
        var result: [LogEntry] = []
        while let row = try rows.next() {
            if let entry = LogEntry(row) { result.append(entry) }
        }
        return result
    }

    /// Calls `body` with each run of readable entries of one row in `rows` (sorted by table
    /// and key), holding one row's entries at a time.
    static func forEachRow(_ rows: RowCursor, _ body: ([LogEntry]) throws -> Void) throws {
        var group: [LogEntry] = []
        while let row = try rows.next() {
            guard let entry = LogEntry(row) else { continue }
            if let first = group.first, first.row != entry.row {
                try body(group)
                group.removeAll(keepingCapacity: true)
            }
            group.append(entry)
        }
        if !group.isEmpty { try body(group) }
    }

    /// The entries with `seq > after` as changes carrying the rows' values now (an insert every
    /// column, an update its changed ones), in seq order, up to `limit` entries and about
    /// `maxBytes` of values (the entry that reaches it is the last; the first is always taken),
    /// with the seq range they cover, or nil when there is none. An insert or update of a row
    /// that no longer exists says nothing (the change that removed it follows in the log, or was
    /// the server's) and is left out, but its seq still counts in the range.
    static func read(
        _ db: Database, schema: Schema, after: Int64, limit: Int, maxBytes: Int = .max
    ) throws -> (first: Int64, last: Int64, changes: [LoggedChange])? {
        var rows = RowValues(schema: schema)
        var changes: [LoggedChange] = []
        var range: (first: Int64, last: Int64)?
        var bytes = 0
        var read = 0
        // A page of entries at a time, so a byte-limited batch reads little more than it sends.
        pages: while read < limit {
            let page = try entries(db, after: range?.last ?? after, limit: min(limit - read, 256))
            if page.isEmpty { break }
            for entry in page {
                read += 1
                range = (range?.first ?? entry.seq, entry.seq)
                let (row, held) = try rows.values(db, entry.table, entry.key)
                if let change = entry.change(row: row, held: held) {
                    changes.append(LoggedChange(seq: entry.seq, change: change))
                    bytes += Self.approximateBytes(change)
                    if bytes >= maxBytes { break pages }
                }
            }
        }
        guard let range else { return nil }
        return (range.first, range.last, changes)
    }

    /// About what `change` takes in an upload (key, values, a few bytes per field); batches are
    /// cut by it so that no upload nears the protocol's message limit, whatever the rows hold.
    static func approximateBytes(_ change: RowChange) -> Int {
        var bytes = 8
        switch change.key {
        case .integer: bytes += 9
        case .text(let text): bytes += text.utf8.count + 4
        }
        for (_, value) in change.fields {
            bytes += 3
            switch value {
            case .null: break
            case .integer, .real: bytes += 9
            case .text(let text): bytes += text.utf8.count + 4
            case .blob(let blob): bytes += blob.count + 4
            }
        }
        return bytes
    }

    /// Calls `body` with the entries of one row at a time (seq ≤ `through`), rows in table and
    /// key order, each row's in seq order: the log read in one pass (sorted by SQLite, not in
    /// memory) without holding more than one row's entries. Entries `body` appends (with
    /// higher seqs) are not visited.
    static func forEachRow(_ db: Database, through: Int64, _ body: ([LogEntry]) throws -> Void) throws {
        try forEachRow(Row.fetchCursor(db, sql: """
            SELECT seq, tbl, pk, kind, cols FROM _tether_log WHERE seq <= ? ORDER BY tbl, pk, seq
            """, arguments: [through]), body)
    }

    /// Drops the entries with `seq <= through` (integrated by the server): one range delete.
    @discardableResult
    static func trim(_ db: Database, through seq: Int64) throws -> Int {
        try db.cachedStatement(sql: "DELETE FROM _tether_log WHERE seq <= ?").execute(arguments: [seq])
        let trimmed = db.changesCount
        if trimmed > 0 { try HeldValues.releaseUnlogged(db) }
        return trimmed
    }

    /// Drops every entry (and every held value).
    static func clear(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM _tether_log")
        try HeldValues.clear(db)
    }

    static func hasPending(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM _tether_log)") ?? false
    }

    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM _tether_log") ?? 0
    }

    /// The highest `seq` in the log now (0 when it is empty).
    static func maxSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM _tether_log") ?? 0
    }

    /// The highest `seq` ever assigned (0 before the first change); seqs are never reused.
    static func lastAssignedSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: lastAssignedSeqSQL) ?? 0
    }

    /// The query behind ``lastAssignedSeq(_:)`` (also part of the commit watcher's fingerprint).
    static let lastAssignedSeqSQL = "SELECT seq FROM sqlite_sequence WHERE name = '_tether_log'"

    /// Logs every row already in `table` as an insert (a store adopted from an application).
    static func captureExistingRows(_ db: Database, table: TableSchema) throws {
        let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
        try db.execute(
            sql: "INSERT INTO _tether_log (tbl, pk, kind) SELECT ?, \(pk), 'insert' FROM \(t) ORDER BY \(pk)",
            arguments: [table.name])
    }
}

/// One row of one table, as the change log names it.
struct LoggedRow: Hashable, Sendable {
    var table: String
    var key: RowKey
}

/// The current values of rows, looked up once each (a batch of log entries often names a row
/// several times), with what ``HeldValues`` kept for rows that are gone.
struct RowValues {
    let schema: Schema
    private var cache: [LoggedRow: (row: [String: FieldValue]?, held: [String: FieldValue]?)] = [:]

    init(schema: Schema) { self.schema = schema }

    /// The row's value columns now (nil when it does not exist, or its table is not in the
    /// schema), and when it does not exist, what is held for it.
    mutating func values(_ db: Database, _ table: String, _ key: RowKey) throws -> (row: [String: FieldValue]?, held: [String: FieldValue]?) {
        let id = LoggedRow(table: table, key: key)
        if let cached = cache[id] { return cached }
        let values = try Self.current(db, schema.table(table), id)
        cache[id] = values
        return values
    }

    /// The row's value columns now (nil when it does not exist or `table` is nil), and when it
    /// does not exist, what ``HeldValues`` kept for it.
    static func current(
        _ db: Database, _ table: TableSchema?, _ id: LoggedRow
    ) throws -> (row: [String: FieldValue]?, held: [String: FieldValue]?) {
        let row = try table.flatMap { try RowWriter.fetch(db, $0, key: id.key) }
        return (row, row == nil ? try HeldValues.fields(db, id) : nil)
    }
}
