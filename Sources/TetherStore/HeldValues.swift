import Foundation
import GRDB
import TetherProtocol

/// Local values the change log still needs after the row that held them is gone
/// (`_tether_held`). The log names rows, not values, so a server delete applied to a row with a
/// pending local update would take the update's values with it; the sync model keeps them
/// (docs/sync-model.md: the local update comes later in server order, so it is uploaded, and a
/// server insert that re-creates the row gets the pending local fields). The apply keeps them
/// here in that one case; they are read only while the row is absent, and dropped when the row
/// is re-created or the log no longer names it.
enum HeldValues {
    /// Keeps `fields` for `row` (replacing what was kept for it).
    static func hold(_ db: Database, _ row: LoggedRow, fields: [String: FieldValue]) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO _tether_held (tbl, pk, fields) VALUES (?, ?, ?)")
            .execute(arguments: [row.table, row.key.databaseValue, Data(FieldValue.encodedFields(fields))])
    }

    /// What is kept for `row`, or nil.
    static func fields(_ db: Database, _ row: LoggedRow) throws -> [String: FieldValue]? {
        guard let bytes = try Data.fetchOne(
            db.cachedStatement(sql: "SELECT fields FROM _tether_held WHERE tbl = ? AND pk = ?"),
            arguments: [row.table, row.key.databaseValue])
        else { return nil }
        // Bytes the agent wrote that no longer decode: a damaged store, said so, never read as
        // "nothing kept" (the kept values would be lost without a word).
        return try FieldValue.decodeFields([UInt8](bytes))
    }

    static func release(_ db: Database, _ row: LoggedRow) throws {
        try db.cachedStatement(sql: "DELETE FROM _tether_held WHERE tbl = ? AND pk = ?")
            .execute(arguments: [row.table, row.key.databaseValue])
    }

    /// Drops what the log no longer names (after a trim). Nothing to do in the usual case of an
    /// empty table; otherwise one scan of the log per kept row (there are few).
    static func releaseUnlogged(_ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM _tether_held)") == true else { return }
        try db.execute(sql: """
            DELETE FROM _tether_held WHERE NOT EXISTS
              (SELECT 1 FROM _tether_log AS l WHERE l.tbl = _tether_held.tbl AND l.pk = _tether_held.pk)
            """)
    }

    static func clear(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM _tether_held")
    }
}
