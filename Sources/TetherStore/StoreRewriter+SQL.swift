import GRDB
import TetherProtocol

/// The rewrite as a few statements per table over a staged state store attached to the live
/// store's connection as ``stagingSchema``: rows the state lacks are deleted, the state's rows
/// are upserted, and an update writes a row only when one of its values differs. SQLite does
/// the join inside its B-trees; nothing is read into memory. The result is the one of the
/// merge join (``StoreRewriter/rewrite(_:schema:source:)``): the tests hold them equal. Runs
/// inside the caller's write transaction with the apply flag set.
extension StoreRewriter {
    static let stagingSchema = "tether_staging"

    static func rewrite(_ db: Database, schema: Schema, attached staging: String) throws -> RewriteReport {
        var report = RewriteReport()
        let s = StoreSQL.quote(staging)
        for table in schema.tables {
            let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
            let before = try count(db, "main.\(t)")
            let stagedColumns = try Set(
                String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, ?)", arguments: [table.name, staging]))
            guard stagedColumns.contains(table.primaryKey) else {
                // A table the staged state does not have is empty in that state.
                try db.execute(sql: "DELETE FROM main.\(t)")
                report.deleted += db.changesCount
                continue
            }
            try db.execute(sql: "DELETE FROM main.\(t) WHERE NOT EXISTS (SELECT 1 FROM \(s).\(t) AS staged WHERE staged.\(pk) = main.\(t).\(pk))")
            let deleted = db.changesCount
            let columns = [table.primaryKey] + table.valueColumns.map(\.name)
            let selected = columns.map { stagedColumns.contains($0) ? StoreSQL.quote($0) : "NULL" }
            let values = table.valueColumns.map { StoreSQL.quote($0.name) }
            let onConflict =
                values.isEmpty
                ? "DO NOTHING"
                : "DO UPDATE SET \(values.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")) WHERE \(values.map { "\(t).\($0) IS NOT excluded.\($0)" }.joined(separator: " OR "))"
            try db.execute(sql: """
                INSERT INTO main.\(t) (\(columns.map(StoreSQL.quote).joined(separator: ", ")))
                SELECT \(selected.joined(separator: ", ")) FROM \(s).\(t) WHERE true
                ON CONFLICT(\(pk)) \(onConflict)
                """)
            let written = db.changesCount
            let staged = try count(db, "\(s).\(t)")
            let inserted = try count(db, "main.\(t)") - (before - deleted)
            report.deleted += deleted
            report.inserted += inserted
            report.updated += written - inserted
            report.unchanged += staged - written
        }
        return report
    }

    private static func count(_ db: Database, _ table: String) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
    }
}
