import GRDB
import TetherProtocol

extension ChangeLog {
    /// Folds, among the entries with `seq > after`, every row's entries into one (kept at the
    /// row's last seq, with the net kind and, for an update, the union of the changed columns).
    /// Only changes never uploaded may be collapsed: pass the highest seq handed to the server.
    /// The rows to fold are found by one grouped scan into a temporary table, their entries
    /// read by a second scan, and the log rewritten by two statements; memory holds one row's
    /// entries at a time. Returns the number of entries removed.
    static func collapse(_ db: Database, after: Int64) throws -> Int {
        try db.execute(sql: """
            DROP TABLE IF EXISTS temp._tether_collapse_rows;
            DROP TABLE IF EXISTS temp._tether_collapse_net;
            CREATE TEMP TABLE _tether_collapse_rows (tbl TEXT NOT NULL, pk NOT NULL, PRIMARY KEY (tbl, pk)) WITHOUT ROWID;
            CREATE TEMP TABLE _tether_collapse_net (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, cols TEXT);
            """)
        // Left over: the next collapse drops them first (temp tables are this connection's).
        defer { try? db.execute(sql: "DROP TABLE IF EXISTS temp._tether_collapse_rows; DROP TABLE IF EXISTS temp._tether_collapse_net") }
        try db.execute(sql: """
            INSERT INTO temp._tether_collapse_rows (tbl, pk)
            SELECT tbl, pk FROM main._tether_log WHERE seq > ? GROUP BY tbl, pk HAVING count(*) > 1
            """, arguments: [after])
        guard try Int.fetchOne(db, sql: "SELECT count(*) FROM temp._tether_collapse_rows") ?? 0 > 0 else { return 0 }
        try dropRowIndex(db)  // entries in the middle of the log are rewritten below
        // The net entry of every such row, written to the second temporary table while the
        // log is read (the log itself is changed only once the read is over).
        let insert = try db.makeStatement(sql: "INSERT INTO temp._tether_collapse_net (seq, kind, cols) VALUES (?, ?, ?)")
        let rows = try Row.fetchCursor(db, sql: """
            SELECT l.seq, l.tbl, l.pk, l.kind, l.cols FROM main._tether_log AS l
            WHERE l.seq > ? AND EXISTS (SELECT 1 FROM temp._tether_collapse_rows AS r WHERE r.tbl = l.tbl AND r.pk = l.pk)
            ORDER BY l.tbl, l.pk, l.seq
            """, arguments: [after])
        try forEachRow(rows) { group in
            guard let last = group.last, let net = LogEntry.fold(group) else { return }
            let columns = net.kind == .update ? LogEntry.columnList(net.fields.keys.sorted()) : nil
            try insert.execute(arguments: [last.seq, net.kind.rawValue, columns])
        }
        try db.execute(sql: """
            DELETE FROM main._tether_log
            WHERE seq > ? AND seq NOT IN (SELECT seq FROM temp._tether_collapse_net)
              AND EXISTS (SELECT 1 FROM temp._tether_collapse_rows AS r WHERE r.tbl = _tether_log.tbl AND r.pk = _tether_log.pk)
            """, arguments: [after])
        let removed = db.changesCount
        try db.execute(sql: """
            UPDATE main._tether_log
            SET kind = (SELECT n.kind FROM temp._tether_collapse_net AS n WHERE n.seq = _tether_log.seq),
                cols = (SELECT n.cols FROM temp._tether_collapse_net AS n WHERE n.seq = _tether_log.seq)
            WHERE seq IN (SELECT seq FROM temp._tether_collapse_net)
            """)
        return removed
    }
}
