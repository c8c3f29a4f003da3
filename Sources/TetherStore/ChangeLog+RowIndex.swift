import GRDB
import TetherProtocol

extension ChangeLog {
    /// The change log has no index by row, so capture stays one B-tree insert. An apply that
    /// meets pending changes needs a row's entries, though: the agent keeps that index itself,
    /// off the applications' write path, in a temporary table of its writer connection
    /// (`temp._tether_log_rows`: the log's entries by seq, indexed by table, key and seq). It
    /// is built the first time it is needed (one scan of the log) and then brought up to date
    /// before each use: entries the log trimmed (always a prefix: `seq ≤` some seq) are dropped,
    /// entries appended since are copied. A rewrite of entries in the middle (collapse) drops it.
    static func syncRowIndex(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TEMP TABLE IF NOT EXISTS _tether_log_rows (
              seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, pk NOT NULL, kind TEXT NOT NULL, cols TEXT);
            CREATE INDEX IF NOT EXISTS temp._tether_log_rows_row ON _tether_log_rows (tbl, pk, seq);
            DELETE FROM temp._tether_log_rows
            WHERE seq < coalesce((SELECT min(seq) FROM main._tether_log), (SELECT max(seq) FROM temp._tether_log_rows) + 1);
            INSERT INTO temp._tether_log_rows (seq, tbl, pk, kind, cols)
            SELECT seq, tbl, pk, kind, cols FROM main._tether_log
            WHERE seq > coalesce((SELECT max(seq) FROM temp._tether_log_rows), 0);
            """)
    }

    /// The entries of one row, in seq order, from the index ``syncRowIndex(_:)`` brought up to date.
    static func entries(_ db: Database, of row: LoggedRow) throws -> [LogEntry] {
        try entries(Row.fetchCursor(
            db.cachedStatement(sql: "SELECT seq, tbl, pk, kind, cols FROM temp._tether_log_rows WHERE tbl = ? AND pk = ? ORDER BY seq"),
            arguments: [row.table, row.key.databaseValue]))
    }

    /// Forgets the index (the log was rewritten in the middle); the next use builds it again.
    static func dropRowIndex(_ db: Database) throws {
        try db.execute(sql: "DROP TABLE IF EXISTS temp._tether_log_rows")
    }
}
