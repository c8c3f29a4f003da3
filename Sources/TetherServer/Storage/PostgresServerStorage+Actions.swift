import Foundation
import Logging
import PostgresNIO
import TetherProtocol

extension PostgresServerStorage {
    /// The advisory lock that queues actions one request at a time over every instance, so that
    /// a device's pending count holds (`'tact'`, key 0).
    static let actionLockClass: Int32 = 0x7461_6374

    package func queueActions(
        _ actions: [DeviceActionRecord], maxPendingPerDevice: Int, audit: @Sendable ([DeviceActionRecord]) -> AuditRecord
    ) async throws -> [DeviceActionRecord] {
        try await transaction { connection in
            try await connection.guardedQuery("SELECT pg_advisory_xact_lock(\(Self.actionLockClass), 0)", logger: self.logger)
            let keys = Array(Set(actions.map(\.device)))
            var pending: [DeviceKey: Int] = [:]
            let counts = try await connection.guardedQuery(
                """
                SELECT a.user_name, a.device_id, count(*) FROM device_actions a
                JOIN unnest(\(keys.map(\.user))::text[], \(keys.map(\.deviceID))::text[]) AS k(user_name, device_id)
                    ON a.user_name = k.user_name AND a.device_id = k.device_id
                WHERE a.state IN ('queued', 'sent') GROUP BY a.user_name, a.device_id
                """, logger: self.logger)
            for try await (user, device, count) in counts.decode((String, String, Int64).self) {
                pending[DeviceKey(user: user, deviceID: device)] = Int(count)
            }
            for action in actions {
                pending[action.device, default: 0] += 1
                guard pending[action.device, default: 0] <= maxPendingPerDevice else {
                    throw DeviceActionError.tooManyPending(device: action.deviceName, limit: maxPendingPerDevice)
                }
            }
            var ids: [Int64] = []
            let next = try await connection.guardedQuery(
                "SELECT nextval('device_actions_id_seq') FROM generate_series(1, \(actions.count))", logger: self.logger)
            for try await id in next.decode(Int64.self) { ids.append(id) }
            ids.sort()
            guard ids.count == actions.count else { throw StorageError.corrupt("device_actions_id_seq") }
            var queued = actions
            for index in queued.indices {
                queued[index].id = ids[index]
                queued[index].state = .queued
            }
            // One statement for the whole request, however many devices it takes.
            try await connection.guardedQuery(
                """
                INSERT INTO device_actions(id, user_name, device_id, device_name, kind, partition, requested_by, requested_at, expires_at, state)
                SELECT id, user_name, device_id, device_name, kind, NULLIF(partition, ''), requested_by, requested_at, expires_at, 'queued'
                FROM unnest(\(queued.map(\.id))::bigint[], \(queued.map(\.device.user))::text[], \(queued.map(\.device.deviceID))::text[],
                    \(queued.map(\.deviceName))::text[], \(queued.map(\.kind.rawValue))::text[], \(queued.map { $0.partition ?? "" })::text[],
                    \(queued.map(\.requestedBy))::text[], \(queued.map(\.requestedAt.timeIntervalSince1970))::double precision[],
                    \(queued.map(\.expiresAt.timeIntervalSince1970))::double precision[])
                    AS r(id, user_name, device_id, device_name, kind, partition, requested_by, requested_at, expires_at)
                """, logger: self.logger)
            try await Self.append(audit(queued), connection, self.logger)
            return queued
        }
    }

    package func pendingActions(for devices: [DeviceKey], now: Date) async throws -> [DeviceActionRecord] {
        guard !devices.isEmpty else { return [] }
        let keys = Array(Set(devices))
        return try await withStorageErrors {
            try await client.withConnection { connection in
                try await Self.actions(
                    connection, self.logger,
                    """
                    SELECT \(unescaped: Self.actionColumns) FROM device_actions a
                    JOIN unnest(\(keys.map(\.user))::text[], \(keys.map(\.deviceID))::text[]) AS k(user_name, device_id)
                        ON a.user_name = k.user_name AND a.device_id = k.device_id
                    WHERE a.state IN ('queued', 'sent') AND a.expires_at > \(now.timeIntervalSince1970) ORDER BY a.id
                    """)
            }
        }
    }

    package func devicesWithPendingActions(now: Date, limit: Int) async throws -> [DeviceKey] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let rows = try await connection.guardedQuery(
                    """
                    SELECT DISTINCT user_name, device_id FROM device_actions
                    WHERE state IN ('queued', 'sent') AND expires_at > \(now.timeIntervalSince1970) ORDER BY user_name, device_id LIMIT \(limit)
                    """, logger: self.logger)
                var keys: [DeviceKey] = []
                for try await (user, device) in rows.decode((String, String).self) { keys.append(DeviceKey(user: user, deviceID: device)) }
                return keys
            }
        }
    }

    package func markActionsSent(ids: [Int64], at: Date) async throws {
        guard !ids.isEmpty else { return }
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await connection.guardedQuery(
                    """
                    UPDATE device_actions SET state = 'sent', sent_at = \(at.timeIntervalSince1970)
                    WHERE id = ANY(\(ids)::bigint[]) AND state IN ('queued', 'sent')
                    """, logger: self.logger)
            }
        }
    }

    package func finishAction(_ outcome: DeviceActionOutcome, key: DeviceKey, audit: AuditRecord) async throws -> Bool {
        try await transaction { connection in
            let rows = try await connection.guardedQuery(
                """
                UPDATE device_actions SET state = \(outcome.state.rawValue), finished_at = \(outcome.at.timeIntervalSince1970),
                    message = \(outcome.message), report = \(outcome.report)
                WHERE id = \(outcome.id) AND user_name = \(key.user) AND device_id = \(key.deviceID) AND state IN ('queued', 'sent')
                RETURNING 1
                """, logger: self.logger)
            var updated = false
            for try await _ in rows.decode(Int.self) { updated = true }
            guard updated else { return false }
            try await Self.append(audit, connection, self.logger)
            return true
        }
    }

    package func deviceActions(deviceID: String, limit: Int) async throws -> [DeviceActionRecord] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await Self.actions(
                    connection, self.logger,
                    "SELECT \(unescaped: Self.actionColumns) FROM device_actions a WHERE a.device_id = \(deviceID) ORDER BY a.id DESC LIMIT \(limit)")
            }
        }
    }

    package func deviceAction(id: Int64) async throws -> DeviceActionRecord? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                guard var record = try await Self.actions(
                    connection, self.logger, "SELECT \(unescaped: Self.actionColumns) FROM device_actions a WHERE a.id = \(id)"
                ).first else { return nil }
                let rows = try await connection.guardedQuery("SELECT report FROM device_actions WHERE id = \(id)", logger: self.logger)
                for try await report in rows.decode(String?.self) { record.report = report }
                return record
            }
        }
    }

    package func expireActions(now: Date, pruneBefore: Date, actor: String) async throws -> [DeviceActionRecord] {
        try await transaction { connection in
            let due = try await Self.actions(
                connection, self.logger,
                """
                SELECT \(unescaped: Self.actionColumns) FROM device_actions a
                WHERE a.state IN ('queued', 'sent') AND a.expires_at <= \(now.timeIntervalSince1970) ORDER BY a.id FOR UPDATE
                """)
            var expired: [DeviceActionRecord] = []
            for var record in due {
                record.message = DeviceActionRecord.expiredMessage(record)
                record.state = .expired
                record.finishedAt = now
                try await connection.guardedQuery(
                    "UPDATE device_actions SET state = 'expired', finished_at = \(now.timeIntervalSince1970), message = \(record.message) WHERE id = \(record.id)",
                    logger: self.logger)
                try await Self.append(DeviceActionAudit.expired(record, actor: actor, at: now), connection, self.logger)
                expired.append(record)
            }
            try await connection.guardedQuery(
                "DELETE FROM device_actions WHERE state NOT IN ('queued', 'sent') AND finished_at < \(pruneBefore.timeIntervalSince1970)",
                logger: self.logger)
            return expired
        }
    }

    package func recordAcceptedActions(_ key: DeviceKey, kinds: [RemoteActionKind], at: Date) async throws {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await connection.guardedQuery(
                    """
                    INSERT INTO device_accepted_actions(user_name, device_id, kinds, reported_at)
                    VALUES (\(key.user), \(key.deviceID), \(DeviceActionRecord.kindsText(kinds)), \(at.timeIntervalSince1970))
                    ON CONFLICT(user_name, device_id) DO UPDATE SET kinds = excluded.kinds, reported_at = excluded.reported_at
                    """, logger: self.logger)
            }
        }
    }

    package func acceptedActions(deviceID: String) async throws -> [RemoteActionKind]? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let rows = try await connection.guardedQuery(
                    "SELECT kinds FROM device_accepted_actions WHERE device_id = \(deviceID) ORDER BY reported_at DESC LIMIT 1", logger: self.logger)
                for try await kinds in rows.decode(String.self) { return DeviceActionRecord.kinds(fromText: kinds) }
                return nil
            }
        }
    }

    static let actionColumns = """
        a.id, a.user_name, a.device_id, a.device_name, a.kind, a.partition, a.requested_by, a.requested_at, a.expires_at, a.state,
        a.sent_at, a.finished_at, a.message, a.report IS NOT NULL
        """

    private static func actions(_ connection: PostgresConnection, _ logger: Logger, _ query: PostgresQuery) async throws -> [DeviceActionRecord] {
        var records: [DeviceActionRecord] = []
        let rows = try await connection.guardedQuery(query, logger: logger)
        for try await row in rows.decode(
            (Int64, String, String, String, String, String?, String, Double, Double, String, Double?, Double?, String?, Bool).self)
        {
            guard let state = DeviceActionState(rawValue: row.9) else { throw StorageError.corrupt("device_actions") }
            records.append(DeviceActionRecord(
                id: row.0, device: DeviceKey(user: row.1, deviceID: row.2), deviceName: row.3, kind: RemoteActionKind(rawValue: row.4),
                partition: row.5, requestedBy: row.6, requestedAt: Date(timeIntervalSince1970: row.7),
                expiresAt: Date(timeIntervalSince1970: row.8), state: state, sentAt: row.10.map(Date.init(timeIntervalSince1970:)),
                finishedAt: row.11.map(Date.init(timeIntervalSince1970:)), message: row.12, hasReport: row.13))
        }
        return records
    }
}
