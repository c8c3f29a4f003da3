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

    @Test func aBatchIsAnIndexRangeWithStaleStatistics() async throws {
        try await withStorage(.postgresql) { storage, _ in
            let postgres = try #require(storage as? PostgresServerStorage)
            let partitionID = try await StaleStatistics.load(postgres, partition: partition, rows: 20_000)

            let scope = try StorageConformanceTests.scope("total > 0 AND total <= 2000")
            let table = try #require(StateSelection(.holdable([scope]), indexed: ["orders": ["total"]]).ordered?.first)
            let keys = try await postgres.transaction { connection in
                try await PostgresServerStorage.candidateKeys(table.rows, partitionID: partitionID, table: "orders", connection, postgres.logger)
            }
            #expect(keys.count == 2000 && keys == keys.sorted(by: CandidateKeys.precedes))
            let batch = PostgresStateReader.batchQuery(Array(keys.prefix(PostgresStateReader.keysPerRead)), partitionID: partitionID, table: "orders")
            let plan = try await StaleStatistics.plan(postgres, batch.sql) { $0 = batch.binds }
            // The scan of `state` finds the batch's range in the index, not the partition's every row.
            #expect(StaleStatistics.probesEachKey(plan), "\(plan.joined(separator: "\n"))")

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

extension PostgresStateReaderTests {
    /// A whole state is read page by page in key order: each page must be the index read from
    /// where the last one ended, never the partition sorted again (which made a download of a
    /// freshly loaded partition quadratic).
    @Test func aPageIsAnIndexScanWithStaleStatistics() async throws {
        try await withStorage(.postgresql) { storage, _ in
            let postgres = try #require(storage as? PostgresServerStorage)
            let partitionID = try await StaleStatistics.load(postgres, partition: partition, rows: 20_000)
            let first = try await StaleStatistics.plan(postgres, PostgresHotSQL.StateFirstRows.sql) { binds in
                binds.append(partitionID)
                binds.append(Int64(1000))
            }
            let next = try await StaleStatistics.plan(postgres, PostgresHotSQL.StateNextRows.sql) { binds in
                binds.append(partitionID)
                binds.append("orders")
                binds.append(ByteBuffer(bytes: [3, 6] + Array("o05000".utf8)))
                binds.append(Int64(1000))
            }
            for plan in [first, next] {
                #expect(
                    plan.contains { $0.contains("Index Scan using state_pkey") } && !plan.contains { $0.contains("Sort") || $0.contains("Bitmap") },
                    "\(plan.joined(separator: "\n"))")
            }
        }
    }
}
