import Foundation
import Logging
import PostgresNIO

/// The ledger's pages, selections and history on PostgreSQL (``DeviceLedgerSQL``).
extension PostgresServerStorage {
    package func devicePageEntries(_ query: DeviceLedgerPageQuery, staleBefore: Date, wedgedBefore: Date) async throws -> [DeviceLedgerEntry] {
        let sql = DeviceLedgerSQL.page(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .postgres)
        guard query.readsStoredHealth else {
            return try await withStorageErrors {
                try await client.withConnection { connection in
                    try await Self.deviceEntries(try await connection.guardedQuery(Self.query(sql), logger: logger))
                }
            }
        }
        // The stored classes are read for these cutoffs (held shared while the
        // page is read), or moved to them first (held for update).
        let cutoffs = DeviceLedgerHealthColumn.Cutoffs(staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        let classed = try await transaction { connection -> [DeviceLedgerEntry]? in
            guard try await Self.healthCutoffs(connection, lock: "FOR SHARE", self.logger) == cutoffs else { return nil }
            return try await Self.deviceEntries(try await connection.guardedQuery(Self.query(sql), logger: self.logger))
        }
        if let classed { return classed }
        return try await transaction { connection in
            let stored = try await Self.healthCutoffs(connection, lock: "FOR UPDATE", self.logger)
            if stored != cutoffs {
                for statement in DeviceLedgerHealthColumn.refresh(from: stored, to: cutoffs, dialect: .postgres) {
                    try await connection.guardedQuery(Self.query(statement), logger: self.logger)
                }
            }
            return try await Self.deviceEntries(try await connection.guardedQuery(Self.query(sql), logger: self.logger))
        }
    }

    static func healthCutoffs(_ connection: PostgresConnection, lock: String, _ logger: Logger) async throws -> DeviceLedgerHealthColumn.Cutoffs {
        let rows = try await connection.guardedQuery(PostgresQuery(unsafeSQL: DeviceLedgerHealthColumn.cutoffsQuery + " " + lock), logger: logger)
        for try await (stale, wedged) in rows.decode((Double, Double).self) {
            return DeviceLedgerHealthColumn.Cutoffs(staleBefore: stale, wedgedBefore: wedged)
        }
        throw StorageError.corrupt("device_ledger_cutoffs")
    }

    package func deviceCountRows(_ filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date) async throws -> DeviceLedgerCountRows {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let counts = DeviceLedgerSQL.counts(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .postgres)
                var tally = DeviceLedgerCountRows()
                let rows = try await connection.guardedQuery(Self.query(counts), logger: logger)
                for try await (state, health, entries, stale, erroring) in rows.decode((String, Int32, Int64, Int64, Int64).self) {
                    tally.add(state: state, health: Int(health), entries: Int(entries), stale: Int(stale), erroring: Int(erroring))
                }
                return tally
            }
        }
    }

    package func deviceKeys(
        matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, limit: Int
    ) async throws -> [DeviceLedgerKey] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let sql = DeviceLedgerSQL.keys(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: limit, dialect: .postgres)
                var keys: [DeviceLedgerKey] = []
                let rows = try await connection.guardedQuery(Self.query(sql), logger: logger)
                for try await (user, device, partition, name) in rows.decode((String, String, String, String).self) {
                    keys.append(DeviceLedgerKey(user: user, deviceID: device, partition: partition, deviceName: name))
                }
                return keys
            }
        }
    }

    package func countDevices(matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date) async throws -> Int {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let sql = DeviceLedgerSQL.deviceCount(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .postgres)
                var count = 0
                for try await n in try await connection.guardedQuery(Self.query(sql), logger: logger).decode(Int64.self) { count = Int(n) }
                return count
            }
        }
    }

    package func deviceHistory(deviceID: String, since: Date) async throws -> [DeviceHistorySample] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let rows = try await connection.guardedQuery(
                    """
                    SELECT user_name, partition, bucket, max_unsynced, last_upload_at, state, reported_at FROM device_history
                    WHERE device_id = \(deviceID) AND bucket >= \(DeviceHistory.bucket(of: since))
                    ORDER BY partition, user_name, bucket LIMIT \(Int64(DeviceHistory.maxSamples))
                    """,
                    logger: logger)
                var samples: [DeviceHistorySample] = []
                for try await row in rows.decode((String, String, Int64, Int64, Double?, String, Double).self) {
                    samples.append(DeviceHistorySample(
                        user: row.0, deviceID: deviceID, partition: row.1, bucketStart: row.2, maxUnsyncedChanges: row.3,
                        lastUploadAt: row.4.map(Date.init(timeIntervalSince1970:)), state: row.5, reportedAt: Date(timeIntervalSince1970: row.6)))
                }
                return samples
            }
        }
    }

    package func expireDeviceHistory(before cutoff: Date) async throws -> Int {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let rows = try await connection.guardedQuery(
                    """
                    WITH gone AS (DELETE FROM device_history WHERE bucket < \(DeviceHistory.bucket(of: cutoff)) RETURNING 1)
                    SELECT count(*) FROM gone
                    """,
                    logger: logger)
                var removed = 0
                for try await count in rows.decode(Int64.self) { removed = Int(count) }
                return removed
            }
        }
    }

    static func query(_ sql: DeviceLedgerSQL) -> PostgresQuery {
        var binds = PostgresBindings()
        for bind in sql.binds {
            switch bind {
            case .text(let text): binds.append(text)
            case .real(let value): binds.append(value)
            case .integer(let value): binds.append(value)
            }
        }
        return PostgresQuery(unsafeSQL: sql.text, binds: binds)
    }
}

extension PostgresServerStorage {
    /// The executed plan of a page's query (`EXPLAIN ANALYZE`), for `tether-bench`'s misses.
    package func explainDevicePage(_ query: DeviceLedgerPageQuery, staleBefore: Date, wedgedBefore: Date) async throws -> String {
        _ = try await devicePageEntries(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        return try await withStorageErrors {
            try await client.withConnection { connection in
                var sql = Self.query(DeviceLedgerSQL.page(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .postgres))
                sql.sql = "EXPLAIN (ANALYZE, BUFFERS) " + sql.sql
                var lines: [String] = []
                for try await line in try await connection.guardedQuery(sql, logger: logger).decode(String.self) { lines.append(line) }
                return lines.joined(separator: "\n")
            }
        }
    }
}
