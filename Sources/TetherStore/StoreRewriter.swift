import GRDB
import TetherProtocol

/// What a rewrite in place did to the user tables, in row counts.
package struct RewriteReport: Sendable, Hashable {
    package var inserted = 0
    package var updated = 0
    package var deleted = 0
    package var unchanged = 0

    package init() {}

    /// Rows written (inserted, updated or deleted).
    package var written: Int { inserted + updated + deleted }
}

/// Rewrites the user tables to a full state by a merge join: the state's rows (sorted by key)
/// against the existing rows read a page at a time in key order. Only rows that differ are
/// written (updates touch only the differing columns); rows absent from the state are deleted.
/// Memory is bounded by one page plus what the source buffers. Runs inside the caller's write
/// transaction with the apply flag set.
enum StoreRewriter {
    static let pageSize = 256

    static func rewrite(_ db: Database, schema: Schema, source: inout some StateSource) throws -> RewriteReport {
        var report = RewriteReport()
        var pending = try nextRow(&source, schema: schema)
        for table in schema.tables {
            var existing = ExistingRows(table: table)
            var current = try existing.next(db)
            var previous: RowKey?
            while let row = pending, row.table == table.name {
                try ChangeValidator.checkKey(row.key, of: table)
                if let previous, !(previous < row.key) { throw StoreError.stateNotSorted(table: table.name) }
                previous = row.key
                var fields = try ChangeValidator.fields(row.fields, key: row.key, of: table, complete: true)
                for column in table.valueColumns where fields[column.name] == nil { fields[column.name] = .null }

                while let (key, _) = current, key < row.key {
                    try RowWriter.delete(db, table, key: key)
                    report.deleted += 1
                    current = try existing.next(db)
                }
                if let (key, old) = current, key == row.key {
                    let changed = fields.filter { old[$0.key] != $0.value }
                    if changed.isEmpty {
                        report.unchanged += 1
                    } else {
                        try RowWriter.update(db, table, key: key, fields: changed)
                        report.updated += 1
                    }
                    current = try existing.next(db)
                } else {
                    try RowWriter.insert(db, table, key: row.key, fields: fields)
                    report.inserted += 1
                }
                pending = try nextRow(&source, schema: schema)
            }
            while let (key, _) = current {
                try RowWriter.delete(db, table, key: key)
                report.deleted += 1
                current = try existing.next(db)
            }
        }
        // Rows left over belong to a table that came out of order.
        if let row = pending { throw StoreError.stateNotSorted(table: row.table) }
        return report
    }

    private static func nextRow(_ source: inout some StateSource, schema: Schema) throws -> StateRow? {
        guard let row = try source.next() else { return nil }
        guard schema.table(row.table) != nil else { throw StoreError.unknownTable(table: row.table) }
        return row
    }

    /// The existing rows of one table in key order, fetched a page at a time by key (keyset
    /// pagination). Rows the rewrite inserts always sort before the page's last key, so they
    /// are never read back; rows it deletes were read already.
    struct ExistingRows {
        let table: TableSchema
        private var page: [(RowKey, [String: FieldValue])] = []
        private var index = 0
        private var lastKey: RowKey?
        private var exhausted = false

        init(table: TableSchema) { self.table = table }

        mutating func next(_ db: Database) throws -> (RowKey, [String: FieldValue])? {
            if index < page.count {
                defer { index += 1 }
                return page[index]
            }
            if exhausted { return nil }
            let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
            let rows: [Row]
            if let lastKey {
                rows = try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM \(t) WHERE \(pk) > ? ORDER BY \(pk) LIMIT \(StoreRewriter.pageSize)"),
                    arguments: [lastKey.databaseValue])
            } else {
                rows = try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM \(t) ORDER BY \(pk) LIMIT \(StoreRewriter.pageSize)"))
            }
            exhausted = rows.count < StoreRewriter.pageSize
            page = rows.compactMap { row in
                RowKey(row[table.primaryKey] as DatabaseValue? ?? .null).map { ($0, RowWriter.fields(of: row, table)) }
            }
            index = 0
            lastKey = page.last?.0 ?? lastKey
            if page.isEmpty { exhausted = true; return nil }
            index = 1
            return page[0]
        }
    }
}
