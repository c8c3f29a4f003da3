import Foundation
import Logging
import PostgresNIO
import TetherProtocol

extension PostgresServerStorage {
    /// Also increments every partition's epoch under its row lock (in id order, as compaction
    /// takes them): an upload or history read of a session bound before this, on any instance,
    /// is refused with ``StorageError/fenced`` from the commit on — also one whose bind raced
    /// this command and registered a client file after the client files were forgotten.
    package func terminateSync() async throws -> Int {
        try await transaction { connection in
            try await connection.guardedQuery("SELECT id FROM partitions ORDER BY id FOR UPDATE", logger: self.logger)
            try await connection.guardedQuery("UPDATE partitions SET epoch = epoch + 1", logger: self.logger)
            var flags = try await Self.readFlags(connection, self.logger)
            flags.syncTerminated = true
            try await Self.write(flags, connection, self.logger)
            // When each store last bound stays known to the heal detection (``HealDetection``).
            try await connection.guardedQuery(
                """
                INSERT INTO forgotten_client_files(id, partition_id, last_seen) SELECT id, partition_id, last_seen FROM client_files
                ON CONFLICT (id) DO UPDATE SET last_seen = EXCLUDED.last_seen
                """, logger: self.logger)
            var forgotten = 0
            for try await count in try await connection.guardedQuery(
                "WITH gone AS (DELETE FROM client_files RETURNING 1) SELECT count(*) FROM gone", logger: self.logger
            ).decode(Int64.self) {
                forgotten = Int(count)
            }
            return forgotten
        }
    }

    package func snapshot(of partition: PartitionName, now: Date) async throws -> SnapshotRecord {
        try await transaction { connection in
            let logger = self.logger
            // The partition's lock: no upload commits between the copies of state and client files.
            let p = try await Self.createPartitionIfNeeded(partition, now: now, lock: true, connection, logger)
            let id = PartitionRules.snapshotID()
            try await connection.guardedQuery(
                """
                INSERT INTO snapshots(id, partition_id, version, salt, base_version, base_salt, created_at)
                VALUES (\(id), \(p.id), \(p.head.latest.version), \(p.head.latest.salt), \(p.head.base.version), \(p.head.base.salt),
                    \(now.timeIntervalSince1970))
                """, logger: logger)
            try await connection.guardedQuery(
                "INSERT INTO snapshot_state(snapshot_id, tbl, key, fields) SELECT \(id), tbl, key, fields FROM state WHERE partition_id = \(p.id)",
                logger: logger)
            try await connection.guardedQuery(
                """
                INSERT INTO snapshot_client_files(snapshot_id, id, \(unescaped: ClientFileRecord.copiedColumns))
                SELECT \(id), id, \(unescaped: ClientFileRecord.copiedColumns) FROM client_files WHERE partition_id = \(p.id)
                """, logger: logger)
            return SnapshotRecord(id: id, partition: partition.rawValue, version: p.head.latest.version, createdAt: now)
        }
    }

    package func restore(
        _ partition: PartitionName, to snapshot: String, mode: RestoreMode, now: Date
    ) async throws -> (PartitionHead, HealRecord?) {
        try await transaction { connection in
            let logger = self.logger
            guard let p = try await Self.partitionRow(partition, lock: true, connection, logger) else {
                throw StorageError.notFound("partition \(partition)")
            }
            var found: (latest: ServerVersion, base: ServerVersion)? = nil
            for try await (version, salt, baseVersion, baseSalt) in try await connection.guardedQuery(
                "SELECT version, salt, base_version, base_salt FROM snapshots WHERE id = \(snapshot) AND partition_id = \(p.id)",
                logger: logger
            ).decode((Int64, Int64, Int64, Int64).self) {
                found = (ServerVersion(version: version, salt: salt), ServerVersion(version: baseVersion, salt: baseSalt))
            }
            guard let found else { throw StorageError.notFound("snapshot \(snapshot) of partition \(partition)") }
            // The lost window, read before the history after the snapshot goes.
            var window: LostWindow? = nil
            if HealPlan.losesWindow(before: p.head, snapshot: found.latest) {
                var salts: [Int64: Int64] = [:]
                for try await (version, salt) in try await connection.guardedQuery(
                    "SELECT version, salt FROM history WHERE partition_id = \(p.id) AND version > \(found.latest.version)", logger: logger
                ).decode((Int64, Int64).self) {
                    salts[version] = salt
                }
                window = LostWindow(restoredTo: found.latest.version, lostUntil: p.head.latest.version, salts: salts)
            }
            let plan = HistoryInvariant.restore(
                current: p.head, snapshot: found.latest,
                saltInRetainedHistory: try await Self.retainedSalt(of: found.latest.version, in: p, connection, logger))
            try await connection.guardedQuery(
                "DELETE FROM history WHERE partition_id = \(p.id) AND version > \(plan.keepsHistory ? found.latest.version : -1)",
                logger: logger)
            try await connection.guardedQuery("DELETE FROM state WHERE partition_id = \(p.id)", logger: logger)
            try await connection.guardedQuery(
                "INSERT INTO state(partition_id, tbl, key, fields) SELECT \(p.id), tbl, key, fields FROM snapshot_state WHERE snapshot_id = \(snapshot)",
                logger: logger)
            try await Self.reindexPartition(p.id, connection, logger)
            try await connection.guardedQuery("DELETE FROM client_files WHERE partition_id = \(p.id)", logger: logger)
            try await connection.guardedQuery(
                """
                INSERT INTO client_files(id, partition_id, \(unescaped: ClientFileRecord.copiedColumns))
                SELECT id, \(p.id), \(unescaped: ClientFileRecord.copiedColumns)
                FROM snapshot_client_files WHERE snapshot_id = \(snapshot)
                """, logger: logger)
            try await connection.guardedQuery(
                """
                UPDATE partitions SET latest_version = \(plan.head.latest.version), latest_salt = \(plan.head.latest.salt),
                    base_version = \(plan.head.base.version), base_salt = \(plan.head.base.salt), epoch = epoch + 1 WHERE id = \(p.id)
                """, logger: logger)
            try await Self.checkHistory(of: p.id, head: plan.head, connection, logger)
            guard let window else { return (plan.head, nil) }
            let record = HealPlan.record(
                partition, window: window, mode: HealPlan.effectiveMode(mode, keepsHistory: plan.keepsHistory), origin: .snapshotRestore,
                now: now)
            try await Self.write(record, salts: window.salts, partitionID: p.id, connection, logger)
            return (plan.head, record)
        }
    }

    /// One instance compacts at a time (an advisory lock); each partition under its row lock.
    package func compact(olderThan cutoff: Date) async throws -> CompactionReport {
        try await transaction { connection in
            let logger = self.logger
            try await connection.guardedQuery("SELECT pg_advisory_xact_lock(\(Self.compactionLock))", logger: logger)
            var partitions: [(Int64, String)] = []
            for try await row in try await connection.guardedQuery("SELECT id, name FROM partitions ORDER BY id", logger: logger)
                .decode((Int64, String).self)
            {
                partitions.append(row)
            }
            var removed: [String: Int] = [:]
            for (id, name) in partitions {
                try await connection.guardedQuery("SELECT id FROM partitions WHERE id = \(id) FOR UPDATE", logger: logger)
                // Under the lock: a partition with an open heal keeps its post-restore history (healing folds it).
                var newest: (Int64, Int64)? = nil
                for try await row in try await connection.guardedQuery(
                    """
                    SELECT version, salt FROM history WHERE partition_id = \(id) AND created_at < \(cutoff.timeIntervalSince1970)
                        AND NOT EXISTS (SELECT 1 FROM heals h WHERE h.partition_id = \(id) AND h.mode = 'heal' AND h.closed_at IS NULL)
                    ORDER BY version DESC LIMIT 1
                    """, logger: logger
                ).decode((Int64, Int64).self) {
                    newest = row
                }
                guard let (version, salt) = newest else { continue }
                for try await count in try await connection.guardedQuery(
                    """
                    WITH gone AS (DELETE FROM history WHERE partition_id = \(id) AND version <= \(version) RETURNING 1)
                    SELECT count(*) FROM gone
                    """, logger: logger
                ).decode(Int64.self) {
                    removed[name] = Int(count)
                }
                try await connection.guardedQuery(
                    "UPDATE partitions SET base_version = \(version), base_salt = \(salt) WHERE id = \(id)", logger: logger)
                var latest: ServerVersion? = nil
                for try await (latestVersion, latestSalt) in try await connection.guardedQuery(
                    "SELECT latest_version, latest_salt FROM partitions WHERE id = \(id)", logger: logger
                ).decode((Int64, Int64).self) {
                    latest = ServerVersion(version: latestVersion, salt: latestSalt)
                }
                if let latest {
                    try await Self.checkHistory(
                        of: id, head: PartitionHead(latest: latest, base: ServerVersion(version: version, salt: salt)), connection, logger)
                }
            }
            return CompactionReport(partitions: removed)
        }
    }

    package func partitions() async throws -> [PartitionStatistics] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var result: [PartitionStatistics] = []
                let rows = try await connection.guardedQuery(
                    """
                    SELECT p.name, p.latest_version, p.latest_salt, p.base_version, p.base_salt,
                        (SELECT count(*) FROM history h WHERE h.partition_id = p.id),
                        (SELECT coalesce(sum(octet_length(h.changeset)), 0)::bigint FROM history h WHERE h.partition_id = p.id),
                        (SELECT count(*) FROM state s WHERE s.partition_id = p.id),
                        (SELECT count(*) FROM client_files c WHERE c.partition_id = p.id)
                    FROM partitions p ORDER BY p.name COLLATE "C"
                    """, logger: logger)
                for try await (name, latest, latestSalt, base, baseSalt, entries, bytes, stateRows, files) in rows.decode(
                    (String, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64).self)
                {
                    result.append(PartitionStatistics(
                        name: name,
                        head: PartitionHead(
                            latest: ServerVersion(version: latest, salt: latestSalt), base: ServerVersion(version: base, salt: baseSalt)),
                        historyEntries: Int(entries), historyBytes: bytes, rows: Int(stateRows), clientFiles: Int(files)))
                }
                return result
            }
        }
    }
}

extension PostgresServerStorage {
    package func snapshots(of partition: PartitionName) async throws -> [SnapshotRecord] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let rows = try await connection.guardedQuery(
                    """
                    SELECT s.id, s.version, s.created_at FROM snapshots s JOIN partitions p ON p.id = s.partition_id
                    WHERE p.name = \(partition.rawValue) ORDER BY s.created_at DESC, s.id LIMIT 100
                    """,
                    logger: logger)
                var records: [SnapshotRecord] = []
                for try await (id, version, createdAt) in rows.decode((String, Int64, Double).self) {
                    records.append(SnapshotRecord(id: id, partition: partition.rawValue, version: version, createdAt: Date(timeIntervalSince1970: createdAt)))
                }
                return records
            }
        }
    }
}
