import Foundation
import PostgresNIO
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The upload's statements that name rows by arrays of keys probe each key whatever the
/// planner believes of the partition (``StaleStatistics``): joined plainly, they hashed the
/// partition's every row for each upload while its statistics were stale.
@Suite(.postgresCluster) struct PostgresHotSQLTests {
    @Test func keyedStatementsProbeEachKeyWithStaleStatistics() async throws {
        try await withStorage(.postgresql) { storage, _ in
            let postgres = try #require(storage as? PostgresServerStorage)
            let id = try await StaleStatistics.load(postgres, partition: PartitionName("store-17")!, rows: 20_000)
            let keys: [ByteBuffer] = try await postgres.transaction { connection in
                var keys: [ByteBuffer] = []
                for try await key in try await connection.query(
                    "SELECT key FROM state WHERE partition_id = \(id) ORDER BY key DESC LIMIT 1000", logger: postgres.logger
                ).decode(ByteBuffer.self) { keys.append(key) }
                return keys
            }
            let tables = Array(repeating: "orders", count: keys.count)
            for sql in [PostgresHotSQL.StateRowsForKeys.sql, PostgresHotSQL.DeleteStateRows.sql] {
                let plan = try await StaleStatistics.plan(postgres, sql) { binds in
                    binds.append(id)
                    binds.append(tables)
                    binds.append(keys)
                }
                #expect(StaleStatistics.probesEachKey(plan), "\(sql)\n\(plan.joined(separator: "\n"))")
            }
            let plan = try await StaleStatistics.plan(postgres, PostgresHotSQL.DeleteIndexEntries.sql) { binds in
                binds.append(id)
                binds.append(tables)
                binds.append(Array(repeating: "total", count: keys.count))
                binds.append(keys)
                binds.append(keys)
            }
            #expect(StaleStatistics.probesEachKey(plan), "\(plan.joined(separator: "\n"))")

            // The statements still do their work: 1,000 rows read, then removed with their entries.
            let (file, _) = try await storage.registerClientFile(in: PartitionName("store-17")!, now: StaleStatistics.now)
            let deletes: [RowChange] = (0..<1000).map { .delete("orders", .text(String(format: "o%05d", 19_999 - $0))) }
            let outcome = try await storage.integrate(
                [UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(deletes))], from: file.id, into: PartitionName("store-17")!, now: StaleStatistics.now)
            #expect(outcome.accepted == 1)
            let left = try await postgres.transaction { connection in
                var counts: [Int64] = []
                for query: PostgresQuery in [
                    "SELECT count(*) FROM state WHERE partition_id = \(id)", "SELECT count(*) FROM state_index WHERE partition_id = \(id)",
                ] {
                    for try await count in try await connection.query(query, logger: postgres.logger).decode(Int64.self) { counts.append(count) }
                }
                return counts
            }
            #expect(left == [19_000, 19_000])
        }
    }
}
