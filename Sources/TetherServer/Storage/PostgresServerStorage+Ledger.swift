import Foundation
import Logging
import PostgresNIO
import TetherProtocol

extension PostgresServerStorage {
    package func recordDeviceReports(_ entries: [DeviceLedgerEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await transaction { connection in try await Self.upsert(entries, connection, self.logger) }
    }

    package func admitDeviceReport(
        _ entries: [DeviceLedgerEntry], granted: Set<String>, limits: DeviceLedgerIntake.Limits
    ) async throws -> DeviceLedgerIntake.Outcome {
        let entries = DeviceLedgerIntake.distinct(entries)
        guard let first = entries.first else { return DeviceLedgerIntake.Outcome() }
        return try await transaction { connection in
            // One report of a user at a time, over every instance: its quota holds.
            try await connection.guardedQuery(
                "SELECT pg_advisory_xact_lock(\(Self.ledgerLockClass), hashtext(\(first.user)))", logger: self.logger)
            var held: Set<String> = []
            let rows = try await connection.guardedQuery(
                "SELECT partition FROM device_reports WHERE user_name = \(first.user) AND device_id = \(first.deviceID)", logger: self.logger)
            for try await partition in rows.decode(String.self) { held.insert(partition) }
            var facts = DeviceLedgerIntake.Facts(heldPartitions: held, knownPartitions: [])
            let asked = entries.map(\.partition).filter { !held.contains($0) && granted.contains($0) }
            if !asked.isEmpty {
                let known = try await connection.guardedQuery("SELECT name FROM partitions WHERE name = ANY(\(asked))", logger: self.logger)
                for try await name in known.decode(String.self) { facts.knownPartitions.insert(name) }
            }
            if held.isEmpty {
                let devices = try await connection.guardedQuery(
                    "SELECT count(DISTINCT device_id) FROM device_reports WHERE user_name = \(first.user)", logger: self.logger)
                for try await count in devices.decode(Int64.self) { facts.userDevices = Int(count) }
            }
            if DeviceLedgerIntake.addsEntries(entries, held: held) {
                let total = try await connection.guardedQuery("SELECT count(*) FROM device_reports", logger: self.logger)
                for try await count in total.decode(Int64.self) { facts.totalEntries = Int(count) }
            }
            let outcome = DeviceLedgerIntake.decide(entries, granted: granted, facts: facts, limits: limits)
            try await Self.upsert(outcome.kept, connection, self.logger)
            return outcome
        }
    }

    /// The first key of the two-key advisory lock a user's device reports take (`'tdev'`).
    static let ledgerLockClass: Int32 = 0x7464_6576

    private static func upsert(_ entries: [DeviceLedgerEntry], _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !entries.isEmpty else { return }
        // The stored health classes' cutoffs, shared before any entry is written: a refresh
        // (which takes them for update, then the entries) waits for this write, or this write
        // for it, and the trigger classes the entries for the cutoffs that hold at commit.
        try await connection.guardedQuery(PostgresQuery(unsafeSQL: DeviceLedgerHealthColumn.cutoffsQuery + " FOR SHARE"), logger: logger)
        for entry in entries {
            let sample = DeviceHistory.sample(of: entry)
            try await connection.guardedQuery(
                """
                INSERT INTO device_history(device_id, partition, user_name, bucket, max_unsynced, last_upload_at, state, reported_at)
                VALUES (\(sample.deviceID), \(sample.partition), \(sample.user), \(sample.bucketStart), \(sample.maxUnsyncedChanges),
                    \(sample.lastUploadAt?.timeIntervalSince1970), \(sample.state), \(sample.reportedAt.timeIntervalSince1970))
                ON CONFLICT(device_id, partition, user_name, bucket) DO UPDATE SET
                    max_unsynced = GREATEST(device_history.max_unsynced, excluded.max_unsynced),
                    last_upload_at = excluded.last_upload_at, state = excluded.state, reported_at = excluded.reported_at
                """,
                logger: logger)
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
                ON CONFLICT(user_name, device_id, partition) DO UPDATE SET
                    device_name = excluded.device_name, release = excluded.release,
                    state = excluded.state, server_version = excluded.server_version, client_file = excluded.client_file,
                    unsynced = excluded.unsynced, unsynced_since = excluded.unsynced_since,
                    last_upload_at = excluded.last_upload_at, last_error_code = excluded.last_error_code,
                    last_error_at = excluded.last_error_at, resets = excluded.resets,
                    pending_reset = excluded.pending_reset, reported_at = excluded.reported_at
                """,
                logger: logger)
        }
    }

    package func devices(_ query: DeviceQuery) async throws -> [DeviceLedgerEntry] {
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
                    ORDER BY reported_at DESC, device_id, partition, user_name LIMIT \(query.limit)
                    """,
                    logger: logger)
                return try await Self.deviceEntries(rows)
            }
        }
    }

    /// The entries of rows of ``DeviceLedgerSQL/columns``.
    static func deviceEntries(_ rows: PostgresRowSequence) async throws -> [DeviceLedgerEntry] {
        var entries: [DeviceLedgerEntry] = []
        for try await row in rows.decode(
            (String, String, String, String, String, String, Int64, Int64, Int64, Double?, Double?, Int64?, Double?, String,
             String?, Double).self)
        {
            try entries.append(DeviceLedgerEntry(
                deviceID: row.0, deviceName: row.2, user: row.3, release: row.4, partition: row.1, state: row.5,
                serverVersion: row.6, clientFile: row.7, unsyncedChanges: row.8,
                unsyncedSince: row.9.map(Date.init(timeIntervalSince1970:)), lastUploadAt: row.10.map(Date.init(timeIntervalSince1970:)),
                lastErrorCode: row.11, lastErrorAt: row.12.map(Date.init(timeIntervalSince1970:)),
                resets: DeviceLedgerEntry.resets(fromJSON: row.13), pendingReset: row.14,
                reportedAt: Date(timeIntervalSince1970: row.15)))
        }
        return entries
    }

    package func deviceCounts(staleBefore: Date, wedgedBefore: Date) async throws -> DeviceCounts {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var counts = DeviceCounts()
                let states = try await connection.guardedQuery("SELECT state, count(*) FROM device_reports GROUP BY state", logger: logger)
                for try await (state, count) in states.decode((String, Int64).self) { counts.byState[state] = Int(count) }
                let stale = try await connection.guardedQuery(
                    """
                    SELECT count(*) FROM (SELECT 1 FROM device_reports GROUP BY user_name, device_id
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

    package func expireDevices(reportedBefore cutoff: Date, maxEntries: Int) async throws -> Int {
        try await transaction { connection in
            var removed = 0
            let aged = try await connection.guardedQuery(
                """
                WITH gone AS (DELETE FROM device_reports WHERE reported_at < \(cutoff.timeIntervalSince1970) RETURNING 1)
                SELECT count(*) FROM gone
                """,
                logger: self.logger)
            for try await count in aged.decode(Int64.self) { removed = Int(count) }
            var counts: [Int] = []
            let perUser = try await connection.guardedQuery("SELECT count(*) FROM device_reports GROUP BY user_name", logger: self.logger)
            for try await count in perUser.decode(Int64.self) { counts.append(Int(count)) }
            if let cap = DeviceLedgerTrim.cap(entriesPerUser: counts, maxEntries: maxEntries) {
                var binds = PostgresBindings()
                binds.append(Int64(cap))
                let trimmed = try await connection.guardedQuery(
                    PostgresQuery(
                        unsafeSQL: """
                            WITH gone AS (
                                DELETE FROM device_reports WHERE (user_name, device_id, partition) IN (
                                    \(DeviceLedgerEntry.beyondCapKeys(cap: "$1::bigint")))
                                RETURNING 1)
                            SELECT count(*) FROM gone
                            """,
                        binds: binds),
                    logger: self.logger)
                for try await count in trimmed.decode(Int64.self) { removed += Int(count) }
            }
            return removed
        }
    }
}
