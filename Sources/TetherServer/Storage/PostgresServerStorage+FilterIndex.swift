import Foundation
import Logging
import NIOCore
import PostgresNIO
import TetherProtocol

/// The filter index on PostgreSQL (``FilterIndexColumns``), as on SQLite: `state_index` is
/// written in the transaction that writes the rows; every instance maintains the columns
/// `state_index_columns` holds, read in that transaction.
extension PostgresServerStorage {
    static func filterIndexColumns(_ connection: PostgresConnection, _ logger: Logger) async throws -> FilterIndexColumns {
        var pairs: [QueryableColumn] = []
        for try await row in try await connection.guardedExecute(PostgresHotSQL.FilterIndexColumnsSQL.self, logger: logger) {
            let (table, column) = try row.decode((String, String).self)
            pairs.append(QueryableColumn(table: table, column: column))
        }
        return FilterIndexColumns(pairs)
    }

    /// Index entries to remove and add, gathered over many rows and written in two statements.
    struct IndexEntries {
        var tables: [String] = [], columns: [String] = [], values: [ByteBuffer] = [], keys: [ByteBuffer] = []
        var isEmpty: Bool { keys.isEmpty }

        mutating func append(_ table: String, _ key: [UInt8], _ entries: [FilterIndexColumns.Entry]) {
            for entry in entries {
                tables.append(table)
                columns.append(entry.column)
                values.append(ByteBuffer(bytes: entry.value))
                keys.append(ByteBuffer(bytes: key))
            }
        }
    }

    static func writeIndex(
        removed: IndexEntries, added: IndexEntries, partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        if !removed.isEmpty {
            try await connection.guardedRun(
                PostgresHotSQL.DeleteIndexEntries.self, partitionID, removed.tables, removed.columns, removed.values, removed.keys,
                logger: logger)
        }
        if !added.isEmpty {
            try await connection.guardedRun(
                PostgresHotSQL.InsertIndexEntries.self, partitionID, added.tables, added.columns, added.values, added.keys, logger: logger)
        }
    }

    /// Writes the entries of `columns` for every state row of their tables (of one partition, or
    /// of all); returns the rows read.
    @discardableResult
    static func indexState(_ columns: FilterIndexColumns, partitionID: Int64?, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
        var read = 0
        for table in columns.byTable.keys.sorted() {
            let rows = try await connection.guardedQuery(
                partitionID.map { "SELECT partition_id, key, fields FROM state WHERE partition_id = \($0) AND tbl = \(table)" }
                    ?? "SELECT partition_id, key, fields FROM state WHERE tbl = \(table)",
                logger: logger)
            var pending: [Int64: IndexEntries] = [:]
            for try await (owner, key, fields) in rows.decode((Int64, ByteBuffer, ByteBuffer).self) {
                pending[owner, default: IndexEntries()].append(table, key.bytes, Array(try columns.entries(table, fields: fields.bytes)))
                read += 1
            }
            for (owner, entries) in pending {
                try await writeIndex(removed: IndexEntries(), added: entries, partitionID: owner, connection, logger)
            }
        }
        return read
    }

    /// Rebuilds one partition's entries (its state was replaced: a restore).
    static func reindexPartition(_ partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.guardedQuery("DELETE FROM state_index WHERE partition_id = \(partitionID)", logger: logger)
        try await indexState(try await filterIndexColumns(connection, logger), partitionID: partitionID, connection, logger)
    }

    /// Rebuilds every entry (the state was rewritten by a breaking schema change).
    static func reindexAll(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.guardedQuery("DELETE FROM state_index", logger: logger)
        try await indexState(try await filterIndexColumns(connection, logger), partitionID: nil, connection, logger)
    }

    package func reconcileFilterIndex(_ wanted: FilterIndexColumns) async throws -> FilterIndexChange {
        try await transaction { connection in
            let logger = self.logger
            // Instances starting together reconcile one after the other; writers of indexed
            // tables wait for the partitions' locks.
            try await connection.guardedQuery("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            let current = try await Self.filterIndexColumns(connection, logger).pairs
            let added = wanted.pairs.subtracting(current), dropped = current.subtracting(wanted.pairs)
            guard !added.isEmpty || !dropped.isEmpty else { return FilterIndexChange(added: [], dropped: [], rowsIndexed: 0) }
            // No partition integrates while the set changes: each upload reads the set it keeps.
            try await connection.guardedQuery("SELECT id FROM partitions ORDER BY id FOR UPDATE", logger: logger)
            for pair in dropped {
                try await connection.guardedQuery(
                    "DELETE FROM state_index WHERE tbl = \(pair.table) AND col = \(pair.column)", logger: logger)
                try await connection.guardedQuery(
                    "DELETE FROM state_index_columns WHERE tbl = \(pair.table) AND col = \(pair.column)", logger: logger)
            }
            for pair in added {
                try await connection.guardedQuery(
                    "INSERT INTO state_index_columns(tbl, col) VALUES (\(pair.table), \(pair.column))", logger: logger)
            }
            let rows = added.isEmpty ? 0 : try await Self.indexState(FilterIndexColumns(added), partitionID: nil, connection, logger)
            return FilterIndexChange(added: added.sorted(), dropped: dropped.sorted(), rowsIndexed: rows)
        }
    }

    package func unindexedTables(of scope: SubscriptionScope, in partition: PartitionName, over limit: Int) async throws -> [String] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let logger = self.logger
                let unserved = StateSelection.unserved(scope, indexed: try await Self.filterIndexColumns(connection, logger).indexed)
                guard !unserved.isEmpty, let p = try await Self.partitionRow(partition, connection, logger) else { return [] }
                var over: [String] = []
                for table in unserved {
                    let rows = try await connection.guardedQuery(
                        "SELECT count(*) FROM (SELECT 1 FROM state WHERE partition_id = \(p.id) AND tbl = \(table) LIMIT \(limit + 1)) AS s",
                        logger: logger)
                    for try await count in rows.decode(Int64.self) where count > limit { over.append(table) }
                }
                return over
            }
        }
    }

    /// The keys `selected` reads of `table` (``CandidateKeys``), in key order: the reader's
    /// batches of them are ranges of the primary key (``PostgresStateReader/batchQuery(_:partitionID:table:)``).
    static func candidateKeys(
        _ selected: StateSelection.Table, partitionID: Int64, table: String, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [[UInt8]] {
        try await CandidateKeys.of(selected, inKeyOrder: true) { plan in try await candidateKeys(plan, partitionID: partitionID, table: table, connection, logger) }
    }

    /// The keys of the rows `plan`'s ranges find, range by range (a key twice when two find it).
    private static func candidateKeys(
        _ plan: IndexPlan, partitionID: Int64, table: String, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        for range in plan.ranges {
            let query = rangeQuery("SELECT i.key FROM state_index i", range, partitionID: partitionID, table: table)
            for try await key in try await connection.guardedQuery(query, logger: logger).decode(ByteBuffer.self) { keys.append(key.bytes) }
        }
        return keys
    }

    /// The rows a selected read returns and their bytes (``StateReader/totalRows``): of a table
    /// read whole, all its rows; of candidates, the rows each range finds (counted again when two
    /// ranges find one: an upper bound).
    static func totals(
        of selection: [(table: String, rows: StateSelection.Table)], partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (Int64, Int64) {
        var (rows, bytes): (Int64, Int64) = (0, 0)
        for (table, selected) in selection {
            var queries: [PostgresQuery] = []
            if case .candidates(let plan) = selected {
                for range in plan.ranges {
                    queries.append(rangeQuery(
                        """
                        SELECT count(*), coalesce(sum(octet_length(s.key) + octet_length(s.fields)), 0)::bigint FROM state_index i
                        JOIN state s ON s.partition_id = i.partition_id AND s.tbl = i.tbl AND s.key = i.key
                        """, range, partitionID: partitionID, table: table))
                }
            } else {
                queries.append(
                    "SELECT count(*), coalesce(sum(octet_length(key) + octet_length(fields)), 0)::bigint FROM state WHERE partition_id = \(partitionID) AND tbl = \(table)")
            }
            for query in queries {
                for try await (count, size) in try await connection.guardedQuery(query, logger: logger).decode((Int64, Int64).self) {
                    rows += count
                    bytes += size
                }
            }
        }
        return (rows, bytes)
    }

    /// `select` (a constant of this file, over the index as `i`) limited to one range's entries;
    /// the comparison operators are the two of each bound's inclusiveness, not input. No low
    /// bound: from the empty bytes, below every value.
    private static func rangeQuery(_ select: String, _ range: IndexPlan.Range, partitionID: Int64, table: String) -> PostgresQuery {
        let low = ByteBuffer(bytes: range.low ?? [])
        let above = range.low == nil || range.lowInclusive ? ">=" : ">"
        guard let high = range.high.map({ ByteBuffer(bytes: $0) }) else {
            return "\(unescaped: select) WHERE i.partition_id = \(partitionID) AND i.tbl = \(table) AND i.col = \(range.column) AND i.value \(unescaped: above) \(low)"
        }
        let below = range.highInclusive ? "<=" : "<"
        return "\(unescaped: select) WHERE i.partition_id = \(partitionID) AND i.tbl = \(table) AND i.col = \(range.column) AND i.value \(unescaped: above) \(low) AND i.value \(unescaped: below) \(high)"
    }
}
