import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// What every ``ServerStorage`` must do, run against SQLite and against a real PostgreSQL 15:
/// the sync server's logic above the storage cannot tell them apart. One file per role:
/// `+HistoryReading`, `+Integration`, `+Policy`, `+Heal`, `+Admin`, `+Housekeeping`, and the
/// device ledger's `+Ledger`, `+LedgerIntake`, `+LedgerMigration`.
@Suite(.postgresCluster) struct StorageConformanceTests {
    let partition = PartitionName("store-17")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func upload(_ first: Int64, _ last: Int64, _ changes: RowChange...) -> UploadChangeset {
        UploadChangeset(firstSeq: first, lastSeq: last, changeset: Changeset(changes))
    }

    func state(_ storage: any HistoryReading, of partition: PartitionName? = nil) async throws -> [String: [String: FieldValue]] {
        let reader = try await storage.openState(of: partition ?? self.partition)
        var rows: [String: [String: FieldValue]] = [:]
        while true {
            let chunk = try await reader.next(maxRows: 2, maxBytes: 1 << 20)
            if chunk.isEmpty { break }
            for change in chunk { rows["\(change.table)/\(keyText(change.key))"] = change.fields }
        }
        await reader.close()
        return rows
    }
}
