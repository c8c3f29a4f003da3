import Logging
import PostgresNIO
import TetherProtocol

/// The history invariant (``HistoryInvariant``) in the PostgreSQL storage, as in the SQLite one:
/// checked inside every transaction that moves a head other than by appending (restore,
/// compaction), and at start, where a partition that breaks it is repaired.
extension PostgresServerStorage {
    /// The salt of `version` in the partition's retained history (``PartitionRules/salt(of:in:)``).
    static func retainedSalt(
        of version: Int64, in partition: StoredPartition?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Int64? {
        switch PartitionRules.salt(of: version, in: partition) {
        case .known(let salt):
            return salt
        case .history(let partitionID):
            for try await salt in try await connection.guardedQuery(
                "SELECT salt FROM history WHERE partition_id = \(partitionID) AND version = \(version)", logger: logger
            ).decode(Int64.self) {
                return salt
            }
            return nil
        }
    }

    static func retainedVersions(of partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> [ServerVersion] {
        var versions: [ServerVersion] = []
        for try await (version, salt) in try await connection.guardedQuery(
            "SELECT version, salt FROM history WHERE partition_id = \(partitionID) ORDER BY version", logger: logger
        ).decode((Int64, Int64).self) {
            versions.append(ServerVersion(version: version, salt: salt))
        }
        return versions
    }

    /// Throws (rolling the transaction back) when `head` and the retained history break the invariant.
    static func checkHistory(of partitionID: Int64, head: PartitionHead, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let problems = HistoryInvariant.violations(head: head, history: try await retainedVersions(of: partitionID, connection, logger))
        guard problems.isEmpty else { throw StorageError.corrupt("partition history: \(problems.joined(separator: "; "))") }
    }

    package func repairHistories() async throws -> [HistoryRepair] {
        try await transaction { connection in
            let logger = self.logger
            var names: [String] = []
            for try await name in try await connection.guardedQuery("SELECT name FROM partitions ORDER BY name COLLATE \"C\"", logger: logger)
                .decode(String.self)
            {
                names.append(name)
            }
            var repairs: [HistoryRepair] = []
            for name in names {
                guard let partition = PartitionName(name),
                    let row = try await Self.partitionRow(partition, lock: true, connection, logger)
                else { continue }
                let history = try await Self.retainedVersions(of: row.id, connection, logger)
                guard let repair = HistoryInvariant.repair(name, head: row.head, history: history) else { continue }
                try await connection.guardedQuery("DELETE FROM history WHERE partition_id = \(row.id)", logger: logger)
                try await connection.guardedQuery(
                    "UPDATE partitions SET base_version = \(repair.head.base.version), base_salt = \(repair.head.base.salt) WHERE id = \(row.id)",
                    logger: logger)
                try await Self.checkHistory(of: row.id, head: repair.head, connection, logger)
                repairs.append(repair)
            }
            return repairs
        }
    }

    package func historyProblems(of partition: PartitionName) async throws -> [String] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                guard let p = try await Self.partitionRow(partition, connection, logger) else { return [] }
                return HistoryInvariant.violations(head: p.head, history: try await Self.retainedVersions(of: p.id, connection, logger))
            }
        }
    }
}
