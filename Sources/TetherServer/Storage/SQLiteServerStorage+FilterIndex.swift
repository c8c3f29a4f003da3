import Foundation
import GRDB
import TetherProtocol

/// The filter index on SQLite (``FilterIndexColumns``): `state_index` holds an entry per indexed
/// column of each state row, written in the transaction that writes the row; `state_index_columns`
/// the columns kept.
extension SQLiteServerStorage {
    static func filterIndexColumns(_ db: Database) throws -> FilterIndexColumns {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT tbl, col FROM state_index_columns"))
        return FilterIndexColumns(rows.map { QueryableColumn(table: $0[0], column: $0[1]) })
    }

    /// Keeps the index of one row written from `before` to `after` (stored fields; nil: absent).
    static func updateFilterIndex(
        _ columns: FilterIndexColumns, partitionID: Int64, table: String, key: Data, before: [UInt8]?, after: [UInt8]?, _ db: Database
    ) throws {
        let (removed, added) = try columns.delta(table, before: before, after: after)
        if !removed.isEmpty {
            let delete = try db.cachedStatement(
                sql: "DELETE FROM state_index WHERE partition_id = ? AND tbl = ? AND col = ? AND value = ? AND key = ?")
            for entry in removed { try delete.execute(arguments: [partitionID, table, entry.column, Data(entry.value), key]) }
        }
        if !added.isEmpty {
            let insert = try db.cachedStatement(
                sql: "INSERT INTO state_index(partition_id, tbl, col, value, key) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
            for entry in added { try insert.execute(arguments: [partitionID, table, entry.column, Data(entry.value), key]) }
        }
    }

    /// Writes the entries of `columns` for every state row of their tables (of one partition,
    /// or of all); returns the rows read.
    @discardableResult
    static func indexState(_ columns: FilterIndexColumns, partitionID: Int64?, _ db: Database) throws -> Int {
        var read = 0
        for table in columns.byTable.keys.sorted() {
            let rows = try Row.fetchCursor(
                db,
                sql: partitionID == nil
                    ? "SELECT partition_id, key, fields FROM state WHERE tbl = ?"
                    : "SELECT partition_id, key, fields FROM state WHERE partition_id = ? AND tbl = ?",
                arguments: partitionID.map { [$0, table] } ?? [table])
            while let row = try rows.next() {
                let fields: Data = row[2]
                try updateFilterIndex(columns, partitionID: row[0], table: table, key: row[1], before: nil, after: [UInt8](fields), db)
                read += 1
            }
        }
        return read
    }

    /// Rebuilds one partition's entries (its state was replaced: a restore).
    static func reindexPartition(_ partitionID: Int64, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM state_index WHERE partition_id = ?", arguments: [partitionID])
        try indexState(try filterIndexColumns(db), partitionID: partitionID, db)
    }

    /// Rebuilds every entry (the state was rewritten by a breaking schema change).
    static func reindexAll(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM state_index")
        try indexState(try filterIndexColumns(db), partitionID: nil, db)
    }

    package func reconcileFilterIndex(_ wanted: FilterIndexColumns) async throws -> FilterIndexChange {
        try await pool.write { db in
            let current = try Self.filterIndexColumns(db).pairs
            let added = wanted.pairs.subtracting(current), dropped = current.subtracting(wanted.pairs)
            for pair in dropped {
                try db.execute(sql: "DELETE FROM state_index WHERE tbl = ? AND col = ?", arguments: [pair.table, pair.column])
                try db.execute(sql: "DELETE FROM state_index_columns WHERE tbl = ? AND col = ?", arguments: [pair.table, pair.column])
            }
            for pair in added {
                try db.execute(sql: "INSERT INTO state_index_columns(tbl, col) VALUES (?, ?)", arguments: [pair.table, pair.column])
            }
            let rows = added.isEmpty ? 0 : try Self.indexState(FilterIndexColumns(added), partitionID: nil, db)
            return FilterIndexChange(added: added.sorted(), dropped: dropped.sorted(), rowsIndexed: rows)
        }
    }

    package func unindexedTables(of scope: SubscriptionScope, in partition: PartitionName, over limit: Int) async throws -> [String] {
        try await pool.read { db in
            let unserved = StateSelection.unserved(scope, indexed: try Self.filterIndexColumns(db).indexed)
            guard !unserved.isEmpty, let p = try Self.partitionRow(partition, db) else { return [] }
            return try unserved.filter { table in
                let rows = try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM state WHERE partition_id = ? AND tbl = ? LIMIT ?)"),
                    arguments: [p.id, table, limit + 1]) ?? 0
                return rows > limit
            }
        }
    }
    /// The keys `selected` reads of `table` (``CandidateKeys``).
    static func candidateKeys(_ selected: StateSelection.Table, partitionID: Int64, table: String, _ db: Database) throws -> [Data] {
        try CandidateKeys.of(selected) { plan in try candidateKeys(plan, partitionID: partitionID, table: table, db) }
    }

    /// The keys of the rows `plan`'s ranges find, range by range (a key twice when two find it).
    private static func candidateKeys(_ plan: IndexPlan, partitionID: Int64, table: String, _ db: Database) throws -> [Data] {
        var keys: [Data] = []
        for range in plan.ranges {
            let (conditions, arguments) = rangeConditions(range, partitionID: partitionID, table: table)
            let rows = try Data.fetchCursor(db.cachedStatement(sql: "SELECT key FROM state_index i WHERE " + conditions), arguments: arguments)
            while let key = try rows.next() { keys.append(key) }
        }
        return keys
    }

    /// The rows a selected read returns and their bytes (``StateReader/totalRows``): of a table
    /// read whole, all its rows; of candidates, the rows each range finds (counted again when two
    /// ranges find one: an upper bound).
    static func totals(of selection: [(table: String, rows: StateSelection.Table)], partitionID: Int64, _ db: Database) throws -> (Int64, Int64) {
        var (rows, bytes): (Int64, Int64) = (0, 0)
        func add(_ sql: String, _ arguments: StatementArguments) throws {
            guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) else { return }
            rows += row[0] ?? 0
            bytes += row[1] ?? 0
        }
        for (table, selected) in selection {
            guard case .candidates(let plan) = selected else {
                try add(
                    "SELECT count(*), coalesce(sum(length(key) + length(fields)), 0) FROM state WHERE partition_id = ? AND tbl = ?",
                    [partitionID, table])
                continue
            }
            for range in plan.ranges {
                let (conditions, arguments) = rangeConditions(range, partitionID: partitionID, table: table)
                try add(
                    """
                    SELECT count(*), coalesce(sum(length(s.key) + length(s.fields)), 0) FROM state_index i
                    JOIN state s ON s.partition_id = i.partition_id AND s.tbl = i.tbl AND s.key = i.key WHERE
                    """ + " " + conditions, arguments)
            }
        }
        return (rows, bytes)
    }

    /// The conditions on the index (as `i`) of one range's entries, and their arguments.
    private static func rangeConditions(_ range: IndexPlan.Range, partitionID: Int64, table: String) -> (String, StatementArguments) {
        var sql = "i.partition_id = ? AND i.tbl = ? AND i.col = ?"
        var arguments: StatementArguments = [partitionID, table, range.column]
        if let low = range.low {
            sql += range.lowInclusive ? " AND i.value >= ?" : " AND i.value > ?"
            arguments += [Data(low)]
        }
        if let high = range.high {
            sql += range.highInclusive ? " AND i.value <= ?" : " AND i.value < ?"
            arguments += [Data(high)]
        }
        return (sql, arguments)
    }
}

/// What ``PolicyStorage/reconcileFilterIndex(_:)`` changed.
package struct FilterIndexChange: Sendable, Hashable {
    package var added: [QueryableColumn]
    package var dropped: [QueryableColumn]
    /// State rows read to index the added columns.
    package var rowsIndexed: Int
}
