import Foundation
import PostgresNIO
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// PostgreSQL's read of a filtered state by batches of candidate keys: whatever the planner
/// believes of the table, each batch's keys are index conditions. Right after a bulk load (the
/// statistics still those of the tables before it) the planner took a partition for a few dozen
/// rows and scanned all of it for every batch: 30 s for a 10 % bootstrap of a million rows.
@Suite(.postgresCluster) struct PostgresStateReaderTests {
    let partition = PartitionName("store-17")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aBatchIsAnIndexRangeWithStaleStatistics() async throws {
        try await withStorage(.postgresql) { storage, _ in
            let postgres = try #require(storage as? PostgresServerStorage)
            _ = try await storage.reconcileFilterIndex(FilterIndexColumns([QueryableColumn(table: "orders", column: "total")]))
            // Statistics taken over small partitions, then a partition of 20,000 rows they do not know.
            for small in ["a", "b", "c"] {
                let other = PartitionName(small)!
                let (file, _) = try await storage.registerClientFile(in: other, now: now)
                let rows: [RowChange] = (0..<40).map { .insert("orders", .text("o\($0)"), ["total": .real(Double($0))]) }
                _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: file.id, into: other, now: now)
            }
            try await postgres.transaction { connection in _ = try await connection.query("ANALYZE state", logger: postgres.logger) }
            let (file, _) = try await storage.registerClientFile(in: partition, now: now)
            // Totals run against the keys' order: one range's candidates come out of key order.
            let rows: [RowChange] = (0..<20_000).map { .insert("orders", .text(String(format: "o%05d", $0)), ["total": .real(Double(20_000 - $0))]) }
            _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: file.id, into: partition, now: now)

            let scope = try StorageConformanceTests.scope("total > 0 AND total <= 2000")
            let table = try #require(StateSelection(.holdable([scope]), indexed: ["orders": ["total"]]).ordered?.first)
            let (partitionID, plan) = try await postgres.transaction { connection in
                var id: Int64 = 0
                for try await found in try await connection.query("SELECT id FROM partitions WHERE name = \(partition.rawValue)", logger: postgres.logger).decode(Int64.self) {
                    id = found
                }
                let keys = PostgresStateReader.inKeyOrder(
                    try await PostgresServerStorage.candidateKeys(table.rows, partitionID: id, table: "orders", connection, postgres.logger), table.rows)
                #expect(keys.count == 2000 && keys == keys.sorted(by: CandidateKeys.precedes))
                var query = PostgresStateReader.batchQuery(Array(keys.prefix(PostgresStateReader.keysPerRead)), partitionID: id, table: "orders")
                query.sql = "EXPLAIN " + query.sql
                var plan: [String] = []
                for try await line in try await connection.query(query, logger: postgres.logger).decode(String.self) { plan.append(line) }
                return (id, plan.joined(separator: "\n"))
            }
            // The scan of `state` finds the batch's range in the index, not the partition's every row.
            let conditions = plan.split(separator: "\n").filter { $0.contains("Index Cond") && $0.contains("partition_id") }
            #expect(!conditions.isEmpty && conditions.allSatisfy { $0.contains("key >=") || $0.contains("key = ANY") }, "\(partitionID): \(plan)")

            // And the read returns exactly the subset.
            let reader = try await storage.openState(of: partition, holdable: [scope])
            var read = 0
            while true {
                let chunk = try await reader.nextStored(maxRows: 700, maxBytes: 1 << 20)
                if chunk.isEmpty { break }
                read += chunk.count
            }
            await reader.close()
            #expect(read == 2000)
        }
    }
}
