import Foundation
import GRDB
import TetherProtocol

extension SQLiteServerStorage {
    package func terminateSync() async throws -> Int {
        try await pool.write { db in
            var flags = try Self.readFlags(db)
            flags.syncTerminated = true
            try Self.write(flags, db)
            // When each store last bound stays known to the heal detection (``HealDetection``).
            try db.execute(
                sql: "INSERT OR REPLACE INTO forgotten_client_files(id, partition_id, last_seen) SELECT id, partition_id, last_seen FROM client_files")
            try db.execute(sql: "DELETE FROM client_files")
            return db.changesCount
        }
    }

    /// The flags as the `meta` rows say (``ServerFlags/init(meta:)``).
    static func readFlags(_ db: Database) throws -> ServerFlags {
        ServerFlags(meta: Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT key, value FROM meta").map { row -> (String, Int64?) in
                (row["key"], row["value"])
            }))
    }

    package func snapshot(of partition: PartitionName, now: Date) async throws -> SnapshotRecord {
        try await pool.write { db in
            let p = try Self.createPartitionIfNeeded(partition, now: now, db)
            let id = PartitionRules.snapshotID()
            try db.execute(
                sql: """
                    INSERT INTO snapshots(id, partition_id, version, salt, base_version, base_salt, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [id, p.id, p.head.latest.version, p.head.latest.salt, p.head.base.version, p.head.base.salt,
                            now.timeIntervalSince1970])
            try db.execute(
                sql: "INSERT INTO snapshot_state(snapshot_id, tbl, key, fields) SELECT ?, tbl, key, fields FROM state WHERE partition_id = ?",
                arguments: [id, p.id])
            try db.execute(
                sql: """
                    INSERT INTO snapshot_client_files(snapshot_id, id, \(ClientFileRecord.copiedColumns))
                    SELECT ?, id, \(ClientFileRecord.copiedColumns) FROM client_files WHERE partition_id = ?
                    """,
                arguments: [id, p.id])
            return SnapshotRecord(id: id, partition: partition.rawValue, version: p.head.latest.version, createdAt: now)
        }
    }

    package func restore(
        _ partition: PartitionName, to snapshot: String, mode: RestoreMode, now: Date
    ) async throws -> (PartitionHead, HealRecord?) {
        try await pool.write { db in
            guard let p = try Self.partitionRow(partition, db) else { throw StorageError.notFound("partition \(partition)") }
            guard let s = try Row.fetchOne(
                db, sql: "SELECT version, salt, base_version, base_salt FROM snapshots WHERE id = ? AND partition_id = ?",
                arguments: [snapshot, p.id])
            else { throw StorageError.notFound("snapshot \(snapshot) of partition \(partition)") }
            let snapshotVersion = ServerVersion(version: s["version"], salt: s["salt"])
            // The lost window, read before the history after the snapshot goes.
            let window = HealPlan.losesWindow(before: p.head, snapshot: snapshotVersion)
                ? LostWindow(restoredTo: snapshotVersion.version, lostUntil: p.head.latest.version, salts: try Self.salts(of: p.id, after: snapshotVersion.version, db))
                : nil
            let plan = HistoryInvariant.restore(
                current: p.head, snapshot: snapshotVersion,
                saltInRetainedHistory: try Self.retainedSalt(of: snapshotVersion.version, in: p, db))
            try db.execute(
                sql: "DELETE FROM history WHERE partition_id = ? AND version > ?",
                arguments: [p.id, plan.keepsHistory ? snapshotVersion.version : -1])
            try db.execute(sql: "DELETE FROM state WHERE partition_id = ?", arguments: [p.id])
            try db.execute(
                sql: "INSERT INTO state(partition_id, tbl, key, fields) SELECT ?, tbl, key, fields FROM snapshot_state WHERE snapshot_id = ?",
                arguments: [p.id, snapshot])
            try Self.reindexPartition(p.id, db)
            try db.execute(sql: "DELETE FROM client_files WHERE partition_id = ?", arguments: [p.id])
            try db.execute(
                sql: """
                    INSERT INTO client_files(id, partition_id, \(ClientFileRecord.copiedColumns))
                    SELECT id, ?, \(ClientFileRecord.copiedColumns)
                    FROM snapshot_client_files WHERE snapshot_id = ?
                    """,
                arguments: [p.id, snapshot])
            try db.execute(
                sql: "UPDATE partitions SET latest_version = ?, latest_salt = ?, base_version = ?, base_salt = ? WHERE id = ?",
                arguments: [plan.head.latest.version, plan.head.latest.salt, plan.head.base.version, plan.head.base.salt, p.id])
            try Self.checkHistory(of: p.id, head: plan.head, db)
            guard let window else { return (plan.head, nil) }
            let record = HealPlan.record(
                partition, window: window, mode: HealPlan.effectiveMode(mode, keepsHistory: plan.keepsHistory), origin: .snapshotRestore,
                now: now)
            try Self.write(record, salts: window.salts, partitionID: p.id, db)
            return (plan.head, record)
        }
    }

    package func compact(olderThan cutoff: Date) async throws -> CompactionReport {
        try await pool.write { db in
            var removed: [String: Int] = [:]
            // A partition with an open heal keeps its post-restore history: healing folds it.
            let partitions = try Row.fetchAll(db, sql: """
                SELECT id, name FROM partitions p
                WHERE NOT EXISTS (SELECT 1 FROM heals h WHERE h.partition_id = p.id AND h.mode = 'heal' AND h.closed_at IS NULL)
                """)
            for partition in partitions {
                let id: Int64 = partition["id"]
                guard let newest = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT version, salt FROM history WHERE partition_id = ? AND created_at < ?
                        ORDER BY version DESC LIMIT 1
                        """,
                    arguments: [id, cutoff.timeIntervalSince1970])
                else { continue }
                let version: Int64 = newest["version"]
                try db.execute(sql: "DELETE FROM history WHERE partition_id = ? AND version <= ?", arguments: [id, version])
                removed[partition["name"]] = db.changesCount
                try db.execute(
                    sql: "UPDATE partitions SET base_version = ?, base_salt = ? WHERE id = ?",
                    arguments: [version, newest["salt"] as Int64, id])
                if let head = try Self.partitionRow(id: id, db)?.head { try Self.checkHistory(of: id, head: head, db) }
            }
            return CompactionReport(partitions: removed)
        }
    }

    package func partitions() async throws -> [PartitionStatistics] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT p.name, p.latest_version, p.latest_salt, p.base_version, p.base_salt,
                        (SELECT count(*) FROM history h WHERE h.partition_id = p.id) AS entries,
                        (SELECT coalesce(sum(length(h.changeset)), 0) FROM history h WHERE h.partition_id = p.id) AS bytes,
                        (SELECT count(*) FROM state s WHERE s.partition_id = p.id) AS rows,
                        (SELECT count(*) FROM client_files c WHERE c.partition_id = p.id) AS files
                    FROM partitions p ORDER BY p.name
                    """
            ).map { row in
                PartitionStatistics(
                    name: row["name"],
                    head: PartitionHead(
                        latest: ServerVersion(version: row["latest_version"], salt: row["latest_salt"]),
                        base: ServerVersion(version: row["base_version"], salt: row["base_salt"])),
                    historyEntries: row["entries"], historyBytes: row["bytes"], rows: row["rows"], clientFiles: row["files"])
            }
        }
    }

    /// The salts of the partition's history entries after `version`, by version.
    static func salts(of partitionID: Int64, after version: Int64, _ db: Database) throws -> [Int64: Int64] {
        var salts: [Int64: Int64] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT version, salt FROM history WHERE partition_id = ? AND version > ?", arguments: [partitionID, version])
        {
            salts[row["version"]] = row["salt"]
        }
        return salts
    }
}

extension SQLiteServerStorage {
    package func snapshots(of partition: PartitionName) async throws -> [SnapshotRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.version, s.created_at FROM snapshots s JOIN partitions p ON p.id = s.partition_id
                    WHERE p.name = ? ORDER BY s.created_at DESC, s.id LIMIT 100
                    """,
                arguments: [partition.rawValue]
            ).map { row in
                SnapshotRecord(id: row["id"], partition: partition.rawValue, version: row["version"], createdAt: Date(timeIntervalSince1970: row["created_at"]))
            }
        }
    }
}
