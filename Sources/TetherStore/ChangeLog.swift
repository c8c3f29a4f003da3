import GRDB
import TetherProtocol

/// A change as recorded in the change log, with its local sequence number.
public struct LoggedChange: Sendable, Hashable {
    public var seq: Int64
    public var change: RowChange

    public init(seq: Int64, change: RowChange) {
        self.seq = seq
        self.change = change
    }
}

/// The change log tables (`_tether_changes`, `_tether_change_fields`) inside a database access.
/// The capture triggers append to them; the agent reads, trims, collapses and re-queues.
enum ChangeLog {
    /// Appends `change` with the next `seq` and returns it (used for re-queued recovered changes).
    @discardableResult
    static func append(_ db: Database, _ change: RowChange) throws -> Int64 {
        try db.execute(
            sql: "INSERT INTO _tether_changes (tbl, pk, kind) VALUES (?, ?, ?)",
            arguments: [change.table, change.key.databaseValue, change.kind.rawValue])
        let seq = db.lastInsertedRowID
        let statement = try db.cachedStatement(sql: "INSERT INTO _tether_change_fields (seq, col, value) VALUES (?, ?, ?)")
        for (column, value) in change.fields.sorted(by: { $0.key < $1.key }) {
            try statement.execute(arguments: [seq, column, value.databaseValue])
        }
        return seq
    }

    /// Up to `limit` logged changes with `seq > after`, in seq order.
    static func read(_ db: Database, after: Int64, limit: Int) throws -> [LoggedChange] {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT c.seq, c.tbl, c.pk, c.kind, f.col, f.value
            FROM (SELECT seq, tbl, pk, kind FROM _tether_changes WHERE seq > ? ORDER BY seq LIMIT ?) AS c
            LEFT JOIN _tether_change_fields AS f ON f.seq = c.seq
            ORDER BY c.seq, f.col
            """, arguments: [after, limit])
        return try assemble(rows)
    }

    /// Every logged change of one row, in seq order.
    static func changes(_ db: Database, table: String, key: RowKey) throws -> [LoggedChange] {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT c.seq, c.tbl, c.pk, c.kind, f.col, f.value
            FROM _tether_changes AS c LEFT JOIN _tether_change_fields AS f ON f.seq = c.seq
            WHERE c.tbl = ? AND c.pk = ?
            ORDER BY c.seq, f.col
            """, arguments: [table, key.databaseValue])
        return try assemble(rows)
    }

    /// The net effect of the pending changes of one row, or nil when it has none.
    static func pendingNet(_ db: Database, table: String, key: RowKey) throws -> RowChange? {
        let changes = try changes(db, table: table, key: key)
        guard var net = changes.first?.change else { return nil }
        for logged in changes.dropFirst() { net = net.followed(by: logged.change) }
        return net
    }

    /// Calls `body` with the logged changes of one row at a time (seq ≤ `through`), rows in
    /// table and key order, each row's changes in seq order: the log read in one pass without
    /// holding more than one row's changes. Changes `body` logs (with higher seqs) are not
    /// visited.
    static func forEachRow(_ db: Database, through: Int64, _ body: ([RowChange]) throws -> Void) throws {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT c.seq, c.tbl, c.pk, c.kind, f.col, f.value
            FROM _tether_changes AS c LEFT JOIN _tether_change_fields AS f ON f.seq = c.seq
            WHERE c.seq <= ?
            ORDER BY c.tbl, c.pk, c.seq, f.col
            """, arguments: [through])
        var group: [RowChange] = []
        var seq: Int64?
        var skipping = false
        func flushIfAnotherRow(_ next: RowChange?) throws {
            guard let first = group.first else { return }
            if let next, next.table == first.table, next.key == first.key { return }
            try body(group)
            group.removeAll(keepingCapacity: true)
        }
        while let row = try rows.next() {
            let rowSeq: Int64 = row["seq"]
            if rowSeq != seq {
                seq = rowSeq
                let kindName: String = row["kind"]
                guard let key = RowKey(row["pk"] as DatabaseValue), let kind = RowChange.Kind(rawValue: kindName) else {
                    skipping = true  // unreadable entry (not written by the triggers): skipped, as `read` does
                    continue
                }
                skipping = false
                let change = RowChange(table: row["tbl"], key: key, kind: kind)
                try flushIfAnotherRow(change)
                group.append(change)
            }
            if !skipping, let column: String = row["col"], group[group.count - 1].kind != .delete {
                group[group.count - 1].fields[column] = FieldValue(row["value"] as DatabaseValue)
            }
        }
        try flushIfAnotherRow(nil)
    }

    private static func assemble(_ rows: RowCursor) throws -> [LoggedChange] {
        var result: [LoggedChange] = []
        while let row = try rows.next() {
            let seq: Int64 = row["seq"]
            if result.last?.seq != seq {
                let kindName: String = row["kind"]
                guard let key = RowKey(row["pk"] as DatabaseValue),
                    let kind = RowChange.Kind(rawValue: kindName)
                else { continue }  // unreadable entry (not written by the triggers): skipped
                result.append(LoggedChange(seq: seq, change: RowChange(table: row["tbl"], key: key, kind: kind)))
            }
            if let column: String = row["col"], result[result.count - 1].change.kind != .delete {
                result[result.count - 1].change.fields[column] = FieldValue(row["value"] as DatabaseValue)
            }
        }
        return result
    }

    /// Drops the changes with `seq <= through` (integrated by the server).
    @discardableResult
    static func trim(_ db: Database, through seq: Int64) throws -> Int {
        try db.execute(sql: "DELETE FROM _tether_change_fields WHERE seq <= ?", arguments: [seq])
        try db.execute(sql: "DELETE FROM _tether_changes WHERE seq <= ?", arguments: [seq])
        return db.changesCount
    }

    /// Drops every logged change.
    static func clear(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM _tether_change_fields; DELETE FROM _tether_changes")
    }

    static func hasPending(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM _tether_changes)") ?? false
    }

    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM _tether_changes") ?? 0
    }

    /// The highest `seq` in the log now (0 when it is empty).
    static func maxSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM _tether_changes") ?? 0
    }

    /// The highest `seq` ever assigned (0 before the first change); seqs are never reused.
    static func lastAssignedSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = '_tether_changes'") ?? 0
    }

    /// Logs every row already in `table` as an insert (a store adopted from an application).
    static func captureExistingRows(_ db: Database, table: TableSchema) throws {
        let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
        let start = try lastAssignedSeq(db)
        try db.execute(
            sql: "INSERT INTO _tether_changes (tbl, pk, kind) SELECT ?, \(pk), 'insert' FROM \(t) ORDER BY \(pk)",
            arguments: [table.name])
        for column in table.valueColumns {
            try db.execute(sql: """
                INSERT INTO _tether_change_fields (seq, col, value)
                SELECT c.seq, ?, r.\(StoreSQL.quote(column.name))
                FROM _tether_changes AS c JOIN \(t) AS r ON r.\(pk) = c.pk
                WHERE c.seq > ? AND c.tbl = ?
                """, arguments: [column.name, start, table.name])
        }
    }

    /// Folds, among the changes with `seq > after`, every row's changes into one entry (kept at
    /// the row's last seq). Only changes never uploaded may be collapsed: pass the highest seq
    /// handed to the server. Works in bounded batches; returns the number of entries removed.
    static func collapse(_ db: Database, after: Int64) throws -> Int {
        var removed = 0
        while true {
            let groups = try Row.fetchAll(db, sql: """
                SELECT tbl, pk FROM _tether_changes WHERE seq > ?
                GROUP BY tbl, pk HAVING count(*) > 1 LIMIT 256
                """, arguments: [after])
            if groups.isEmpty { return removed }
            var progressed = false
            for group in groups {
                guard let key = RowKey(group["pk"] as DatabaseValue) else { continue }
                let table: String = group["tbl"]
                let entries = try changes(db, table: table, key: key).filter { $0.seq > after }
                guard let last = entries.last, entries.count > 1 else { continue }
                var net = entries[0].change
                for entry in entries.dropFirst() { net = net.followed(by: entry.change) }
                // Fields of every entry (the last one's are rewritten below), then all entries but the last.
                let range: StatementArguments = [table, key.databaseValue, after, last.seq]
                try db.execute(sql: """
                    DELETE FROM _tether_change_fields WHERE seq IN
                      (SELECT seq FROM _tether_changes WHERE tbl = ? AND pk = ? AND seq > ? AND seq <= ?)
                    """, arguments: range)
                try db.execute(
                    sql: "DELETE FROM _tether_changes WHERE tbl = ? AND pk = ? AND seq > ? AND seq < ?", arguments: range)
                try db.execute(
                    sql: "UPDATE _tether_changes SET kind = ? WHERE seq = ?", arguments: [net.kind.rawValue, last.seq])
                let statement = try db.cachedStatement(
                    sql: "INSERT INTO _tether_change_fields (seq, col, value) VALUES (?, ?, ?)")
                for (column, value) in net.fields.sorted(by: { $0.key < $1.key }) {
                    try statement.execute(arguments: [last.seq, column, value.databaseValue])
                }
                removed += entries.count - 1
                progressed = true
            }
            if !progressed { return removed }
        }
    }
}
