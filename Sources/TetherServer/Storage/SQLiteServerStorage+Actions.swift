import Foundation
import GRDB
import TetherProtocol

extension SQLiteServerStorage {
    package func queueActions(
        _ actions: [DeviceActionRecord], maxPendingPerDevice: Int, audit: @Sendable ([DeviceActionRecord]) -> AuditRecord
    ) async throws -> [DeviceActionRecord] {
        try await pool.write { db in
            var pending: [DeviceKey: Int] = [:]
            let count = try db.cachedStatement(sql: "SELECT count(*) FROM device_actions WHERE user_name = ? AND device_id = ? AND state IN ('queued', 'sent')")
            for key in Set(actions.map(\.device)) {
                pending[key] = try Int.fetchOne(count, arguments: [key.user, key.deviceID]) ?? 0
            }
            let insert = try db.cachedStatement(sql: """
                INSERT INTO device_actions(user_name, device_id, device_name, kind, partition, requested_by, requested_at, expires_at, state)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued')
                """)
            var queued: [DeviceActionRecord] = []
            for var action in actions {
                pending[action.device, default: 0] += 1
                guard pending[action.device, default: 0] <= maxPendingPerDevice else {
                    throw DeviceActionError.tooManyPending(device: action.deviceName, limit: maxPendingPerDevice)
                }
                try insert.execute(arguments: [
                    action.device.user, action.device.deviceID, action.deviceName, action.kind.rawValue, action.partition, action.requestedBy,
                    action.requestedAt.timeIntervalSince1970, action.expiresAt.timeIntervalSince1970,
                ])
                action.id = db.lastInsertedRowID
                action.state = .queued
                queued.append(action)
            }
            try Self.append(audit(queued), db)
            return queued
        }
    }

    package func pendingActions(for devices: [DeviceKey], now: Date) async throws -> [DeviceActionRecord] {
        guard !devices.isEmpty else { return [] }
        return try await pool.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT \(Self.actionColumns) FROM device_actions
                WHERE user_name = ? AND device_id = ? AND state IN ('queued', 'sent') AND expires_at > ? ORDER BY id
                """)
            var records: [DeviceActionRecord] = []
            for key in Set(devices).sorted() {
                records += try Row.fetchAll(statement, arguments: [key.user, key.deviceID, now.timeIntervalSince1970]).map(Self.action)
            }
            return records
        }
    }

    package func devicesWithPendingActions(now: Date, limit: Int) async throws -> [DeviceKey] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT user_name, device_id FROM device_actions
                    WHERE state IN ('queued', 'sent') AND expires_at > ? ORDER BY user_name, device_id LIMIT ?
                    """, arguments: [now.timeIntervalSince1970, limit]
            ).map { DeviceKey(user: $0["user_name"], deviceID: $0["device_id"]) }
        }
    }

    package func markActionsSent(ids: [Int64], at: Date) async throws {
        guard !ids.isEmpty else { return }
        try await pool.write { db in
            let statement = try db.cachedStatement(sql: "UPDATE device_actions SET state = 'sent', sent_at = ? WHERE id = ? AND state IN ('queued', 'sent')")
            for id in ids { try statement.execute(arguments: [at.timeIntervalSince1970, id]) }
        }
    }

    package func finishAction(_ outcome: DeviceActionOutcome, key: DeviceKey, audit: AuditRecord) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE device_actions SET state = ?, finished_at = ?, message = ?, report = ?
                    WHERE id = ? AND user_name = ? AND device_id = ? AND state IN ('queued', 'sent')
                    """,
                arguments: [outcome.state.rawValue, outcome.at.timeIntervalSince1970, outcome.message, outcome.report, outcome.id, key.user, key.deviceID])
            guard db.changesCount == 1 else { return false }
            try Self.append(audit, db)
            return true
        }
    }

    package func deviceActions(deviceID: String, limit: Int) async throws -> [DeviceActionRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.actionColumns) FROM device_actions WHERE device_id = ? ORDER BY id DESC LIMIT ?", arguments: [deviceID, limit]
            ).map(Self.action)
        }
    }

    package func deviceAction(id: Int64) async throws -> DeviceActionRecord? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.actionColumns), report FROM device_actions WHERE id = ?", arguments: [id]) else {
                return nil
            }
            var record = try Self.action(row)
            record.report = row["report"]
            return record
        }
    }

    package func expireActions(now: Date, pruneBefore: Date, actor: String) async throws -> [DeviceActionRecord] {
        try await pool.write { db in
            let due = try Row.fetchAll(
                db, sql: "SELECT \(Self.actionColumns) FROM device_actions WHERE state IN ('queued', 'sent') AND expires_at <= ? ORDER BY id",
                arguments: [now.timeIntervalSince1970]
            ).map(Self.action)
            var expired: [DeviceActionRecord] = []
            for var record in due {
                record.message = DeviceActionRecord.expiredMessage(record)
                record.state = .expired
                record.finishedAt = now
                try db.execute(
                    sql: "UPDATE device_actions SET state = 'expired', finished_at = ?, message = ? WHERE id = ?",
                    arguments: [now.timeIntervalSince1970, record.message, record.id])
                try Self.append(DeviceActionAudit.expired(record, actor: actor, at: now), db)
                expired.append(record)
            }
            try db.execute(
                sql: "DELETE FROM device_actions WHERE state NOT IN ('queued', 'sent') AND finished_at < ?", arguments: [pruneBefore.timeIntervalSince1970])
            return expired
        }
    }

    package func recordAcceptedActions(_ key: DeviceKey, kinds: [RemoteActionKind], at: Date) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO device_accepted_actions(user_name, device_id, kinds, reported_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT(user_name, device_id) DO UPDATE SET kinds = excluded.kinds, reported_at = excluded.reported_at
                    """, arguments: [key.user, key.deviceID, DeviceActionRecord.kindsText(kinds), at.timeIntervalSince1970])
        }
    }

    package func acceptedActions(deviceID: String) async throws -> [RemoteActionKind]? {
        try await pool.read { db in
            try String.fetchOne(
                db, sql: "SELECT kinds FROM device_accepted_actions WHERE device_id = ? ORDER BY reported_at DESC LIMIT 1", arguments: [deviceID]
            ).map(DeviceActionRecord.kinds(fromText:))
        }
    }

    static let actionColumns = """
        id, user_name, device_id, device_name, kind, partition, requested_by, requested_at, expires_at, state, sent_at, finished_at,
        message, report IS NOT NULL AS has_report
        """

    static func action(_ row: Row) throws -> DeviceActionRecord {
        guard let state = DeviceActionState(rawValue: row["state"]) else { throw StorageError.corrupt("device_actions") }
        return DeviceActionRecord(
            id: row["id"], device: DeviceKey(user: row["user_name"], deviceID: row["device_id"]), deviceName: row["device_name"],
            kind: RemoteActionKind(rawValue: row["kind"]), partition: row["partition"], requestedBy: row["requested_by"],
            requestedAt: Date(timeIntervalSince1970: row["requested_at"]), expiresAt: Date(timeIntervalSince1970: row["expires_at"]),
            state: state, sentAt: (row["sent_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            finishedAt: (row["finished_at"] as Double?).map(Date.init(timeIntervalSince1970:)), message: row["message"],
            hasReport: row["has_report"])
    }
}
