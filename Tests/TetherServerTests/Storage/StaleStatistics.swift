import Foundation
import PostgresNIO
import TetherProtocol
@testable import TetherServer

/// A PostgreSQL storage as it is right after a bulk load: the statistics were taken over three
/// small partitions, then `partition` received `rows` rows (`o00000`… with `total` running
/// against the keys, `orders.total` queryable) that the planner does not know of.
enum StaleStatistics {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// Loads the storage; returns the partition's id.
    static func load(_ postgres: PostgresServerStorage, partition: PartitionName, rows count: Int) async throws -> Int64 {
        _ = try await postgres.reconcileFilterIndex(FilterIndexColumns([QueryableColumn(table: "orders", column: "total")]))
        for small in ["a", "b", "c"] {
            let other = PartitionName(small)!
            let (file, _) = try await postgres.registerClientFile(in: other, now: now)
            let rows: [RowChange] = (0..<40).map { .insert("orders", .text("o\($0)"), ["total": .real(Double($0))]) }
            _ = try await postgres.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: file.id, into: other, now: now)
        }
        try await postgres.transaction { connection in _ = try await connection.query("ANALYZE", logger: postgres.logger) }
        let (file, _) = try await postgres.registerClientFile(in: partition, now: now)
        let rows: [RowChange] = (0..<count).map { .insert("orders", .text(String(format: "o%05d", $0)), ["total": .real(Double(count - $0))]) }
        _ = try await postgres.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: file.id, into: partition, now: now)
        return try await postgres.transaction { connection in
            for try await id in try await connection.query("SELECT id FROM partitions WHERE name = \(partition.rawValue)", logger: postgres.logger).decode(Int64.self) {
                return id
            }
            return 0
        }
    }

    /// `EXPLAIN` of `sql` with `binds`, one line per plan line.
    static func plan(_ postgres: PostgresServerStorage, _ sql: String, _ binds: (inout PostgresBindings) throws -> Void) async throws -> [String] {
        var explain = PostgresQuery(unsafeSQL: "EXPLAIN " + sql)
        try binds(&explain.binds)
        let query = explain
        return try await postgres.transaction { connection in
            var lines: [String] = []
            for try await line in try await connection.query(query, logger: postgres.logger).decode(String.self) { lines.append(line) }
            return lines
        }
    }

    /// Whether every scan of the partition's index finds each key, not the partition's every row.
    static func probesEachKey(_ plan: [String]) -> Bool {
        let conditions = plan.filter { $0.contains("Index Cond") && $0.contains("partition_id") }
        return !conditions.isEmpty && conditions.allSatisfy { $0.contains("key >=") || $0.contains("key = ") }
    }
}
