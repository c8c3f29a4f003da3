import Foundation
import GRDB
import TetherProtocol

/// The history invariant (``HistoryInvariant``) in the SQLite storage: checked inside every
/// transaction that moves a head other than by appending (restore, compaction), and at open,
/// where a partition that breaks it is repaired.
extension SQLiteServerStorage {
    /// The salt of `version` in `partition`'s retained history (``PartitionRules/salt(of:in:)``).
    static func retainedSalt(of version: Int64, in partition: StoredPartition?, _ db: Database) throws -> Int64? {
        switch PartitionRules.salt(of: version, in: partition) {
        case .known(let salt):
            return salt
        case .history(let partitionID):
            return try Int64.fetchOne(
                db, sql: "SELECT salt FROM history WHERE partition_id = ? AND version = ?", arguments: [partitionID, version])
        }
    }

    static func partitionRow(id: Int64, _ db: Database) throws -> StoredPartition? {
        guard let name = try String.fetchOne(db, sql: "SELECT name FROM partitions WHERE id = ?", arguments: [id]),
            let partition = PartitionName(name)
        else { return nil }
        return try partitionRow(partition, db)
    }

    static func retainedVersions(of partitionID: Int64, _ db: Database) throws -> [ServerVersion] {
        try Row.fetchAll(
            db, sql: "SELECT version, salt FROM history WHERE partition_id = ? ORDER BY version", arguments: [partitionID]
        ).map { ServerVersion(version: $0["version"], salt: $0["salt"]) }
    }

    /// Throws (rolling the transaction back) when `head` and the retained history break the invariant.
    static func checkHistory(of partitionID: Int64, head: PartitionHead, _ db: Database) throws {
        let problems = HistoryInvariant.violations(head: head, history: try retainedVersions(of: partitionID, db))
        guard problems.isEmpty else { throw StorageError.corrupt("partition history: \(problems.joined(separator: "; "))") }
    }

    package func repairHistories() async throws -> [HistoryRepair] {
        try await pool.write { db in
            var repairs: [HistoryRepair] = []
            for name in try String.fetchAll(db, sql: "SELECT name FROM partitions ORDER BY name") {
                guard let partitionName = PartitionName(name), let partition = try Self.partitionRow(partitionName, db) else { continue }
                let id = partition.id
                guard let repair = HistoryInvariant.repair(name, head: partition.head, history: try Self.retainedVersions(of: id, db))
                else { continue }
                try db.execute(sql: "DELETE FROM history WHERE partition_id = ?", arguments: [id])
                try db.execute(
                    sql: "UPDATE partitions SET base_version = ?, base_salt = ? WHERE id = ?",
                    arguments: [repair.head.base.version, repair.head.base.salt, id])
                try Self.checkHistory(of: id, head: repair.head, db)
                repairs.append(repair)
            }
            return repairs
        }
    }

    package func historyProblems(of partition: PartitionName) async throws -> [String] {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db) else { return [] }
            return HistoryInvariant.violations(head: p.head, history: try Self.retainedVersions(of: p.id, db))
        }
    }
}
