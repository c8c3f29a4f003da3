import Foundation
import GRDB

/// The ledger's pages, selections and history on SQLite (``DeviceLedgerSQL``).
extension SQLiteServerStorage {
    package func devicePageEntries(_ query: DeviceLedgerPageQuery, staleBefore: Date, wedgedBefore: Date) async throws -> [DeviceLedgerEntry] {
        let sql = DeviceLedgerSQL.page(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .sqlite)
        let cutoffs = DeviceLedgerHealthColumn.Cutoffs(staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        // The stored classes are read for these cutoffs, or moved to them first.
        let classed = try await pool.read { db -> [DeviceLedgerEntry]? in
            if query.readsStoredHealth, try Self.healthCutoffs(db) != cutoffs { return nil }
            return try Row.fetchAll(db, sql: sql.text, arguments: Self.arguments(sql)).map(Self.deviceEntry)
        }
        if let classed { return classed }
        return try await pool.write { db in
            let stored = try Self.healthCutoffs(db)
            if stored != cutoffs {
                for statement in DeviceLedgerHealthColumn.refresh(from: stored, to: cutoffs, dialect: .sqlite) {
                    try db.execute(sql: statement.text, arguments: Self.arguments(statement))
                }
            }
            return try Row.fetchAll(db, sql: sql.text, arguments: Self.arguments(sql)).map(Self.deviceEntry)
        }
    }

    static func healthCutoffs(_ db: Database) throws -> DeviceLedgerHealthColumn.Cutoffs {
        guard let row = try Row.fetchOne(db, sql: DeviceLedgerHealthColumn.cutoffsQuery) else { throw StorageError.corrupt("device_ledger_cutoffs") }
        return DeviceLedgerHealthColumn.Cutoffs(staleBefore: row[0] as Double, wedgedBefore: row[1] as Double)
    }

    package func deviceCountRows(_ filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date) async throws -> DeviceLedgerCountRows {
        try await pool.read { db in
            let counts = DeviceLedgerSQL.counts(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .sqlite)
            var tally = DeviceLedgerCountRows()
            for row in try Row.fetchAll(db, sql: counts.text, arguments: Self.arguments(counts)) {
                tally.add(state: row[0], health: row[1], entries: row[2], stale: row[3], erroring: row[4])
            }
            return tally
        }
    }

    package func deviceKeys(
        matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, limit: Int
    ) async throws -> [DeviceLedgerKey] {
        try await pool.read { db in
            let sql = DeviceLedgerSQL.keys(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: limit, dialect: .sqlite)
            return try Row.fetchAll(db, sql: sql.text, arguments: Self.arguments(sql)).map { row in
                DeviceLedgerKey(user: row[0], deviceID: row[1], partition: row[2], deviceName: row[3])
            }
        }
    }

    package func countDevices(matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date) async throws -> Int {
        try await pool.read { db in
            let sql = DeviceLedgerSQL.deviceCount(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .sqlite)
            return try Int.fetchOne(db, sql: sql.text, arguments: Self.arguments(sql)) ?? 0
        }
    }

    package func deviceHistory(deviceID: String, since: Date) async throws -> [DeviceHistorySample] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT user_name, partition, bucket, max_unsynced, last_upload_at, state, reported_at FROM device_history
                    WHERE device_id = ? AND bucket >= ? ORDER BY partition, user_name, bucket LIMIT ?
                    """,
                arguments: [deviceID, DeviceHistory.bucket(of: since), DeviceHistory.maxSamples]
            ).map { row in
                DeviceHistorySample(
                    user: row[0], deviceID: deviceID, partition: row[1], bucketStart: row[2], maxUnsyncedChanges: row[3],
                    lastUploadAt: (row[4] as Double?).map(Date.init(timeIntervalSince1970:)), state: row[5],
                    reportedAt: Date(timeIntervalSince1970: row[6]))
            }
        }
    }

    package func expireDeviceHistory(before cutoff: Date) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM device_history WHERE bucket < ?", arguments: [DeviceHistory.bucket(of: cutoff)])
            return db.changesCount
        }
    }

    static func arguments(_ sql: DeviceLedgerSQL) -> StatementArguments {
        StatementArguments(sql.binds.map { bind -> (any DatabaseValueConvertible)? in
            switch bind {
            case .text(let text): text
            case .real(let value): value
            case .integer(let value): value
            }
        })
    }
}

extension SQLiteServerStorage {
    /// The query plan of a page's query (`EXPLAIN QUERY PLAN`), for `tether-bench`'s misses.
    package func explainDevicePage(_ query: DeviceLedgerPageQuery, staleBefore: Date, wedgedBefore: Date) async throws -> String {
        _ = try await devicePageEntries(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        return try await pool.read { db in
            let sql = DeviceLedgerSQL.page(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore, dialect: .sqlite)
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql.text, arguments: Self.arguments(sql))
                .map { row -> String in row["detail"] }.joined(separator: "\n")
        }
    }
}
