import Foundation
import GRDB
import TetherProtocol

extension SQLiteServerStorage {
    package func recordDeviceReports(_ entries: [DeviceLedgerEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await pool.write { db in try Self.upsert(entries, db) }
    }

    package func admitDeviceReport(
        _ entries: [DeviceLedgerEntry], granted: Set<String>, limits: DeviceLedgerIntake.Limits
    ) async throws -> DeviceLedgerIntake.Outcome {
        let entries = DeviceLedgerIntake.distinct(entries)
        guard let first = entries.first else { return DeviceLedgerIntake.Outcome() }
        return try await pool.write { db in
            let held = Set(try String.fetchAll(
                db, sql: "SELECT partition FROM device_reports WHERE user_name = ? AND device_id = ?", arguments: [first.user, first.deviceID]))
            var facts = DeviceLedgerIntake.Facts(heldPartitions: held, knownPartitions: [])
            let lookup = try db.cachedStatement(sql: "SELECT 1 FROM partitions WHERE name = ?")
            for entry in entries where !held.contains(entry.partition) && granted.contains(entry.partition) {
                if try Int.fetchOne(lookup, arguments: [entry.partition]) != nil { facts.knownPartitions.insert(entry.partition) }
            }
            if held.isEmpty {
                facts.userDevices =
                    try Int.fetchOne(db, sql: "SELECT count(DISTINCT device_id) FROM device_reports WHERE user_name = ?", arguments: [first.user]) ?? 0
            }
            if DeviceLedgerIntake.addsEntries(entries, held: held) {
                facts.totalEntries = try Int.fetchOne(db, sql: "SELECT count(*) FROM device_reports") ?? 0
            }
            let outcome = DeviceLedgerIntake.decide(entries, granted: granted, facts: facts, limits: limits)
            try Self.upsert(outcome.kept, db)
            return outcome
        }
    }

    private static func upsert(_ entries: [DeviceLedgerEntry], _ db: Database) throws {
        let statement = try db.cachedStatement(sql: Self.upsertDeviceSQL)
        let history = try db.cachedStatement(sql: Self.upsertHistorySQL)
        for entry in entries {
            let sample = DeviceHistory.sample(of: entry)
            try history.execute(arguments: [
                sample.deviceID, sample.partition, sample.user, sample.bucketStart, sample.maxUnsyncedChanges,
                sample.lastUploadAt?.timeIntervalSince1970, sample.state, sample.reportedAt.timeIntervalSince1970,
            ])
            try statement.execute(arguments: [
                entry.deviceID, entry.partition, entry.deviceName, entry.user, entry.release, entry.state, entry.serverVersion,
                entry.clientFile, entry.unsyncedChanges, entry.unsyncedSince?.timeIntervalSince1970,
                entry.lastUploadAt?.timeIntervalSince1970, entry.lastErrorCode, entry.lastErrorAt?.timeIntervalSince1970,
                entry.resetsJSON, entry.pendingReset, entry.reportedAt.timeIntervalSince1970,
            ])
        }
    }

    package func devices(_ query: DeviceQuery) async throws -> [DeviceLedgerEntry] {
        try await pool.read { db in
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let partition = query.partition {
                conditions.append("partition = ?")
                arguments.append(partition)
            }
            if let state = query.state {
                conditions.append("state = ?")
                arguments.append(state)
            }
            if let before = query.reportedBefore {
                conditions.append("reported_at < ?")
                arguments.append(before.timeIntervalSince1970)
            }
            arguments.append(query.limit)
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try Row.fetchAll(
                db, sql: "SELECT * FROM device_reports \(filter) ORDER BY reported_at DESC, device_id, partition, user_name LIMIT ?",
                arguments: StatementArguments(arguments)
            ).map(Self.deviceEntry)
        }
    }

    package func deviceCounts(staleBefore: Date, wedgedBefore: Date) async throws -> DeviceCounts {
        try await pool.read { db in
            var counts = DeviceCounts()
            for row in try Row.fetchAll(db, sql: "SELECT state, count(*) AS n FROM device_reports GROUP BY state") {
                counts.byState[row["state"]] = row["n"]
            }
            counts.staleDevices =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM (SELECT 1 FROM device_reports GROUP BY user_name, device_id HAVING max(reported_at) < ?)",
                    arguments: [staleBefore.timeIntervalSince1970]) ?? 0
            let cutoff = wedgedBefore.timeIntervalSince1970
            counts.wedged =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM device_reports WHERE \(DeviceLedgerEntry.wedgedCondition(cutoff: "?1"))", arguments: [cutoff]) ?? 0
            return counts
        }
    }

    package func expireDevices(reportedBefore cutoff: Date, maxEntries: Int) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM device_reports WHERE reported_at < ?", arguments: [cutoff.timeIntervalSince1970])
            var removed = db.changesCount
            let counts = try Int.fetchAll(db, sql: "SELECT count(*) FROM device_reports GROUP BY user_name")
            if let cap = DeviceLedgerTrim.cap(entriesPerUser: counts, maxEntries: maxEntries) {
                try db.execute(sql: "DELETE FROM device_reports WHERE (user_name, device_id, partition) IN (\(DeviceLedgerEntry.beyondCapKeys(cap: "?")))",
                    arguments: [cap])
                removed += db.changesCount
            }
            return removed
        }
    }

    static let upsertDeviceSQL = """
        INSERT INTO device_reports(
            device_id, partition, device_name, user_name, release, state, server_version, client_file, unsynced,
            unsynced_since, last_upload_at, last_error_code, last_error_at, resets, pending_reset, reported_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(user_name, device_id, partition) DO UPDATE SET
            device_name = excluded.device_name, release = excluded.release,
            state = excluded.state, server_version = excluded.server_version, client_file = excluded.client_file,
            unsynced = excluded.unsynced, unsynced_since = excluded.unsynced_since, last_upload_at = excluded.last_upload_at,
            last_error_code = excluded.last_error_code, last_error_at = excluded.last_error_at, resets = excluded.resets,
            pending_reset = excluded.pending_reset, reported_at = excluded.reported_at
        """

    /// One sample per entry and bucket: the bucket's most unsynced changes, its last report's rest.
    static let upsertHistorySQL = """
        INSERT INTO device_history(device_id, partition, user_name, bucket, max_unsynced, last_upload_at, state, reported_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(device_id, partition, user_name, bucket) DO UPDATE SET
            max_unsynced = max(max_unsynced, excluded.max_unsynced), last_upload_at = excluded.last_upload_at,
            state = excluded.state, reported_at = excluded.reported_at
        """

    static func deviceEntry(_ row: Row) throws -> DeviceLedgerEntry {
        try DeviceLedgerEntry(
            deviceID: row["device_id"], deviceName: row["device_name"], user: row["user_name"], release: row["release"],
            partition: row["partition"], state: row["state"], serverVersion: row["server_version"], clientFile: row["client_file"],
            unsyncedChanges: row["unsynced"], unsyncedSince: (row["unsynced_since"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastUploadAt: (row["last_upload_at"] as Double?).map(Date.init(timeIntervalSince1970:)), lastErrorCode: row["last_error_code"],
            lastErrorAt: (row["last_error_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            resets: DeviceLedgerEntry.resets(fromJSON: row["resets"]), pendingReset: row["pending_reset"],
            reportedAt: Date(timeIntervalSince1970: row["reported_at"]))
    }
}
