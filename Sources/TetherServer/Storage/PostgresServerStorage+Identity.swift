import Foundation
import Logging
import NIOCore
import PostgresNIO
import TetherProtocol

/// ``IdentityStorage`` shared by every instance (docs/server.md "Enrollment"): an enrollment
/// locks its key's row first, so two instances enrolling with one key at once decide one after
/// the other, each on what the other committed.
extension PostgresServerStorage {
    // MARK: Enrollment keys

    package func createEnrollmentKey(_ key: EnrollmentKeyRecord, audit: AuditRecord) async throws {
        try await transaction { connection in
            try await connection.guardedQuery(
                """
                INSERT INTO enrollment_keys(id, digest, tags, uses_allowed, uses_spent, expires_at, revoked_at, note, created_at, created_by)
                VALUES (\(key.id), \(ByteBuffer(bytes: key.digest)), \(IdentityColumns.tagsJSON(key.tags)), \(key.usesAllowed.map(Int64.init)),
                    \(Int64(key.usesSpent)), \(key.expiresAt?.timeIntervalSince1970), \(key.revokedAt?.timeIntervalSince1970), \(key.note),
                    \(key.createdAt.timeIntervalSince1970), \(key.createdBy))
                """, logger: self.logger)
            try await Self.append(audit, connection, self.logger)
        }
    }

    package func enrollmentKeys() async throws -> [EnrollmentKeyRecord] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await Self.keys(connection, logger, query: "SELECT \(unescaped: Self.keyColumns) FROM enrollment_keys ORDER BY created_at DESC, id")
            }
        }
    }

    package func revokeEnrollmentKey(id: String, at: Date, audit: AuditRecord) async throws {
        try await transaction { connection in
            let changed = try await Self.count(
                connection, self.logger,
                "UPDATE enrollment_keys SET revoked_at = coalesce(revoked_at, \(at.timeIntervalSince1970)) WHERE id = \(id) RETURNING 1")
            guard changed == 1 else { throw StorageError.notFound("enrollment key \(id)") }
            try await Self.append(audit, connection, self.logger)
        }
    }

    // MARK: Enrollment

    package func enroll(
        keyID: String, deviceID: String, name: String,
        decide: @Sendable (EnrollmentKeyRecord?, DeviceIdentityRecord?, String?) -> EnrollmentDecision
    ) async throws -> EnrollmentDecision {
        try await transaction { connection in
            // The key's row first: a second enrollment with it waits here, then reads what the
            // first committed (its use, its device).
            let key = try await Self.keys(
                connection, self.logger, query: "SELECT \(unescaped: Self.keyColumns) FROM enrollment_keys WHERE id = \(keyID) FOR UPDATE"
            ).first
            let device = try await Self.devices(
                connection, self.logger, query: "SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE id = \(deviceID)"
            ).first
            var holder: String?
            for try await id in try await connection.guardedQuery("SELECT id FROM devices WHERE name = \(name)", logger: self.logger)
                .decode(String.self)
            {
                holder = id
            }
            let decision = decide(key, device, holder)
            switch decision {
            case .enroll(let record, let audit):
                try await connection.guardedQuery(
                    """
                    INSERT INTO devices(\(unescaped: Self.deviceColumns))
                    VALUES (\(record.id), \(record.name), \(IdentityColumns.tagsJSON(record.tags)), \(ByteBuffer(bytes: record.credentialDigest)),
                        \(IdentityColumns.pendingColumn(record.pendingDigests).map { ByteBuffer(bytes: $0) }),
                        \(record.rotationRequestedAt?.timeIntervalSince1970), \(record.credentialIssuedAt.timeIntervalSince1970),
                        \(record.createdAt.timeIntervalSince1970), \(record.enrolledWithKey), \(record.lastSeenAt?.timeIntervalSince1970),
                        \(record.revokedAt?.timeIntervalSince1970))
                    """, logger: self.logger)
                try await connection.guardedQuery(
                    "UPDATE enrollment_keys SET uses_spent = uses_spent + 1 WHERE id = \(keyID)", logger: self.logger)
                try await Self.append(audit, connection, self.logger)
            case .reenroll(let record, let audit):
                try await connection.guardedQuery(
                    """
                    UPDATE devices SET name = \(record.name), tags = \(IdentityColumns.tagsJSON(record.tags)),
                        credential_digest = \(ByteBuffer(bytes: record.credentialDigest)),
                        pending_digests = \(IdentityColumns.pendingColumn(record.pendingDigests).map { ByteBuffer(bytes: $0) }),
                        rotation_requested_at = \(record.rotationRequestedAt?.timeIntervalSince1970),
                        credential_issued_at = \(record.credentialIssuedAt.timeIntervalSince1970),
                        created_at = \(record.createdAt.timeIntervalSince1970), enrolled_with_key = \(record.enrolledWithKey),
                        last_seen_at = \(record.lastSeenAt?.timeIntervalSince1970), revoked_at = \(record.revokedAt?.timeIntervalSince1970)
                    WHERE id = \(record.id)
                    """, logger: self.logger)
                try await Self.append(audit, connection, self.logger)
            case .refuse:
                break
            }
            return decision
        }
    }

    // MARK: Devices

    package func device(id: String) async throws -> DeviceIdentityRecord? {
        try await readDevices("SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE id = \(id)").first
    }

    package func device(named name: String) async throws -> DeviceIdentityRecord? {
        try await readDevices("SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE name = \(name)").first
    }

    package func devices(afterName: String?, limit: Int) async throws -> [DeviceIdentityRecord] {
        try await readDevices(
            """
            SELECT \(unescaped: Self.deviceColumns) FROM devices
            WHERE \(afterName)::text IS NULL OR name > \(afterName) ORDER BY name LIMIT \(Int64(limit))
            """)
    }

    package func deviceCount() async throws -> Int {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var count = 0
                for try await n in try await connection.guardedQuery("SELECT count(*) FROM devices", logger: logger).decode(Int64.self) {
                    count = Int(n)
                }
                return count
            }
        }
    }

    package func setTags(deviceID: String, _ tags: [String: String], audit: AuditRecord) async throws {
        try await changeDevice(
            deviceID, audit: audit, "UPDATE devices SET tags = \(IdentityColumns.tagsJSON(tags)) WHERE id = \(deviceID) RETURNING 1")
    }

    package func requestRotation(deviceID: String, at: Date, audit: AuditRecord) async throws {
        try await changeDevice(
            deviceID, audit: audit,
            """
            UPDATE devices SET rotation_requested_at = coalesce(rotation_requested_at, \(at.timeIntervalSince1970))
            WHERE id = \(deviceID) RETURNING 1
            """)
    }

    /// Under a lock of the device's row: two instances handing out credentials at once each
    /// keep the other's.
    package func addPendingCredential(deviceID: String, digest: [UInt8]) async throws {
        try await transaction { connection in
            guard let record = try await Self.lockedDevice(deviceID, connection, self.logger) else {
                throw StorageError.notFound("device \(deviceID)")
            }
            let column = IdentityColumns.pendingColumn(record.addingPending(digest)).map { ByteBuffer(bytes: $0) }
            try await connection.guardedQuery("UPDATE devices SET pending_digests = \(column) WHERE id = \(deviceID)", logger: self.logger)
        }
    }

    package func completeRotation(deviceID: String, digest: [UInt8], at: Date, audit: AuditRecord) async throws -> Bool {
        try await transaction { connection in
            guard let record = try await Self.lockedDevice(deviceID, connection, self.logger), record.revokedAt == nil,
                record.pendingDigests.contains(where: { SecretDigest.equal($0, digest) })
            else { return false }
            try await connection.guardedQuery(
                """
                UPDATE devices SET credential_digest = \(ByteBuffer(bytes: digest)), pending_digests = NULL, rotation_requested_at = NULL,
                    credential_issued_at = \(at.timeIntervalSince1970)
                WHERE id = \(deviceID)
                """, logger: self.logger)
            try await Self.append(audit, connection, self.logger)
            return true
        }
    }

    private static func lockedDevice(_ id: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> DeviceIdentityRecord? {
        try await devices(connection, logger, query: "SELECT \(unescaped: deviceColumns) FROM devices WHERE id = \(id) FOR UPDATE").first
    }

    package func revokeDevice(id: String, at: Date, audit: AuditRecord) async throws {
        try await changeDevice(
            id, audit: audit,
            """
            UPDATE devices SET revoked_at = coalesce(revoked_at, \(at.timeIntervalSince1970)), pending_digests = NULL,
                rotation_requested_at = NULL
            WHERE id = \(id) RETURNING 1
            """)
    }

    package func removeDevice(id: String, audit: AuditRecord) async throws {
        try await changeDevice(id, audit: audit, "DELETE FROM devices WHERE id = \(id) RETURNING 1")
    }

    package func touchDevices(_ seen: [String: Date]) async throws {
        guard !seen.isEmpty else { return }
        let sorted = seen.sorted { $0.key < $1.key }
        let ids = sorted.map(\.key), times = sorted.map { $0.value.timeIntervalSince1970 }
        try await transaction { connection in
            try await connection.guardedQuery(
                """
                UPDATE devices d SET last_seen_at = greatest(coalesce(d.last_seen_at, 0), u.at)
                FROM unnest(\(ids)::text[], \(times)::double precision[]) AS u(id, at) WHERE d.id = u.id
                """, logger: self.logger)
        }
    }

    // MARK: Audit

    package func auditRecords(afterID: Int64, limit: Int) async throws -> [AuditRecord] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var records: [AuditRecord] = []
                let rows = try await connection.guardedQuery(
                    "SELECT id, at, actor, action, subject, detail FROM audit_log WHERE id > \(afterID) ORDER BY id LIMIT \(Int64(limit))",
                    logger: logger)
                for try await (id, at, actor, action, subject, detail) in rows.decode((Int64, Double, String, String, String, String).self) {
                    records.append(AuditRecord(
                        id: id, at: Date(timeIntervalSince1970: at), actor: actor, action: action, subject: subject, detail: detail))
                }
                return records
            }
        }
    }

    // MARK: Rows

    static let deviceColumns =
        "id, name, tags, credential_digest, pending_digests, rotation_requested_at, credential_issued_at, created_at, "
        + "enrolled_with_key, last_seen_at, revoked_at"
    static let keyColumns = "id, digest, tags, uses_allowed, uses_spent, expires_at, revoked_at, note, created_at, created_by"

    /// One change of device `id` (a query `RETURNING 1`) with its audit record;
    /// ``StorageError/notFound`` when no row changed.
    private func changeDevice(_ id: String, audit: AuditRecord, _ query: PostgresQuery) async throws {
        try await transaction { connection in
            guard try await Self.count(connection, self.logger, query) == 1 else { throw StorageError.notFound("device \(id)") }
            try await Self.append(audit, connection, self.logger)
        }
    }

    private func readDevices(_ query: PostgresQuery) async throws -> [DeviceIdentityRecord] {
        try await withStorageErrors {
            try await client.withConnection { connection in try await Self.devices(connection, logger, query: query) }
        }
    }

    private static func count(_ connection: PostgresConnection, _ logger: Logger, _ query: PostgresQuery) async throws -> Int {
        var count = 0
        for try await _ in try await connection.guardedQuery(query, logger: logger).decode(Int32.self) { count += 1 }
        return count
    }

    static func append(_ audit: AuditRecord, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.guardedQuery(
            """
            INSERT INTO audit_log(at, actor, action, subject, detail)
            VALUES (\(audit.at.timeIntervalSince1970), \(audit.actor), \(audit.action), \(audit.subject), \(audit.detail))
            """, logger: logger)
    }

    private static func devices(_ connection: PostgresConnection, _ logger: Logger, query: PostgresQuery) async throws -> [DeviceIdentityRecord] {
        var records: [DeviceIdentityRecord] = []
        let rows = try await connection.guardedQuery(query, logger: logger)
        for try await row in rows.decode(
            (String, String, String, ByteBuffer, ByteBuffer?, Double?, Double, Double, String?, Double?, Double?).self)
        {
            records.append(DeviceIdentityRecord(
                id: row.0, name: row.1, tags: try IdentityColumns.tags(fromJSON: row.2), credentialDigest: row.3.bytes,
                pendingDigests: try IdentityColumns.pendingDigests(fromColumn: row.4?.bytes), rotationRequestedAt: IdentityColumns.date(row.5),
                credentialIssuedAt: Date(timeIntervalSince1970: row.6), createdAt: Date(timeIntervalSince1970: row.7),
                enrolledWithKey: row.8, lastSeenAt: IdentityColumns.date(row.9), revokedAt: IdentityColumns.date(row.10)))
        }
        return records
    }

    private static func keys(_ connection: PostgresConnection, _ logger: Logger, query: PostgresQuery) async throws -> [EnrollmentKeyRecord] {
        var records: [EnrollmentKeyRecord] = []
        let rows = try await connection.guardedQuery(query, logger: logger)
        for try await row in rows.decode((String, ByteBuffer, String, Int64?, Int64, Double?, Double?, String, Double, String).self) {
            records.append(EnrollmentKeyRecord(
                id: row.0, digest: row.1.bytes, tags: try IdentityColumns.tags(fromJSON: row.2), usesAllowed: row.3.map(Int.init),
                usesSpent: Int(row.4), expiresAt: IdentityColumns.date(row.5), revokedAt: IdentityColumns.date(row.6), note: row.7,
                createdAt: Date(timeIntervalSince1970: row.8), createdBy: row.9))
        }
        return records
    }
}
