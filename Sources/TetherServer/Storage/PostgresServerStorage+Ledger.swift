import Foundation
import PostgresNIO
import TetherProtocol

extension PostgresServerStorage {
    public func recordDeviceReports(_ entries: [DeviceLedgerEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await transaction { connection in
            for entry in entries {
                try await connection.guardedQuery(
                    """
                    INSERT INTO device_reports(
                        device_id, partition, device_name, user_name, release, state, server_version, client_file, unsynced,
                        unsynced_since, last_upload_at, last_error_code, last_error_at, resets, pending_reset, reported_at)
                    VALUES (\(entry.deviceID), \(entry.partition), \(entry.deviceName), \(entry.user), \(entry.release),
                        \(entry.state), \(entry.serverVersion), \(entry.clientFile), \(entry.unsyncedChanges),
                        \(entry.unsyncedSince?.timeIntervalSince1970), \(entry.lastUploadAt?.timeIntervalSince1970),
                        \(entry.lastErrorCode), \(entry.lastErrorAt?.timeIntervalSince1970), \(entry.resetsJSON),
                        \(entry.pendingReset), \(entry.reportedAt.timeIntervalSince1970))
                    ON CONFLICT(device_id, partition) DO UPDATE SET
                        device_name = excluded.device_name, user_name = excluded.user_name, release = excluded.release,
                        state = excluded.state, server_version = excluded.server_version, client_file = excluded.client_file,
                        unsynced = excluded.unsynced, unsynced_since = excluded.unsynced_since,
                        last_upload_at = excluded.last_upload_at, last_error_code = excluded.last_error_code,
                        last_error_at = excluded.last_error_at, resets = excluded.resets,
                        pending_reset = excluded.pending_reset, reported_at = excluded.reported_at
                    """,
                    logger: self.logger)
            }
        }
    }

    public func devices(_ query: DeviceQuery) async throws -> [DeviceLedgerEntry] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let before = query.reportedBefore?.timeIntervalSince1970
                let rows = try await connection.guardedQuery(
                    """
                    SELECT device_id, partition, device_name, user_name, release, state, server_version, client_file, unsynced,
                        unsynced_since, last_upload_at, last_error_code, last_error_at, resets, pending_reset, reported_at
                    FROM device_reports
                    WHERE (\(query.partition)::text IS NULL OR partition = \(query.partition))
                        AND (\(query.state)::text IS NULL OR state = \(query.state))
                        AND (\(before)::double precision IS NULL OR reported_at < \(before))
                    ORDER BY reported_at DESC, device_id, partition LIMIT \(query.limit)
                    """,
                    logger: logger)
                var entries: [DeviceLedgerEntry] = []
                for try await row in rows.decode(
                    (String, String, String, String, String, String, Int64, Int64, Int64, Double?, Double?, Int64?, Double?, String,
                     String?, Double).self)
                {
                    entries.append(DeviceLedgerEntry(
                        deviceID: row.0, deviceName: row.2, user: row.3, release: row.4, partition: row.1, state: row.5,
                        serverVersion: row.6, clientFile: row.7, unsyncedChanges: row.8,
                        unsyncedSince: row.9.map(Date.init(timeIntervalSince1970:)), lastUploadAt: row.10.map(Date.init(timeIntervalSince1970:)),
                        lastErrorCode: row.11, lastErrorAt: row.12.map(Date.init(timeIntervalSince1970:)),
                        resets: DeviceLedgerEntry.resets(fromJSON: row.13), pendingReset: row.14,
                        reportedAt: Date(timeIntervalSince1970: row.15)))
                }
                return entries
            }
        }
    }

    public func deviceCounts(staleBefore: Date, wedgedBefore: Date) async throws -> DeviceCounts {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var counts = DeviceCounts()
                let states = try await connection.guardedQuery("SELECT state, count(*) FROM device_reports GROUP BY state", logger: logger)
                for try await (state, count) in states.decode((String, Int64).self) { counts.byState[state] = Int(count) }
                let stale = try await connection.guardedQuery(
                    """
                    SELECT count(*) FROM (SELECT device_id FROM device_reports GROUP BY device_id
                        HAVING max(reported_at) < \(staleBefore.timeIntervalSince1970)) AS stale
                    """,
                    logger: logger)
                for try await count in stale.decode(Int64.self) { counts.staleDevices = Int(count) }
                var binds = PostgresBindings()
                binds.append(wedgedBefore.timeIntervalSince1970)
                let wedged = try await connection.guardedQuery(
                    PostgresQuery(
                        unsafeSQL: "SELECT count(*) FROM device_reports WHERE \(DeviceLedgerEntry.wedgedCondition(cutoff: "$1::double precision"))",
                        binds: binds),
                    logger: logger)
                for try await count in wedged.decode(Int64.self) { counts.wedged = Int(count) }
                return counts
            }
        }
    }

    public func expireDevices(reportedBefore cutoff: Date, maxEntries: Int) async throws -> Int {
        try await transaction { connection in
            var removed = 0
            let rows = try await connection.guardedQuery(
                """
                WITH gone AS (
                    DELETE FROM device_reports WHERE reported_at < \(cutoff.timeIntervalSince1970)
                        OR (device_id, partition) IN (
                            SELECT device_id, partition FROM device_reports ORDER BY reported_at DESC OFFSET \(maxEntries))
                    RETURNING 1)
                SELECT count(*) FROM gone
                """,
                logger: self.logger)
            for try await count in rows.decode(Int64.self) { removed = Int(count) }
            return removed
        }
    }
}

extension PostgresServerStorage {
    public func snapshots(of partition: PartitionName) async throws -> [SnapshotRecord] {
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
