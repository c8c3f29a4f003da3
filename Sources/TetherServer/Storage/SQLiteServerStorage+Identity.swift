import Foundation
import GRDB
import TetherProtocol

/// ``IdentityStorage`` (docs/server.md "Enrollment"): one writer at a time (SQLite's), so an
/// enrollment's read of the key and its write are one transaction no other can interleave.
extension SQLiteServerStorage {
    // MARK: Enrollment keys

    package func createEnrollmentKey(_ key: EnrollmentKeyRecord, audit: AuditRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO enrollment_keys(id, digest, tags, uses_allowed, uses_spent, expires_at, revoked_at, note, created_at, created_by)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    key.id, Data(key.digest), IdentityColumns.tagsJSON(key.tags), key.usesAllowed, key.usesSpent,
                    key.expiresAt?.timeIntervalSince1970, key.revokedAt?.timeIntervalSince1970, key.note,
                    key.createdAt.timeIntervalSince1970, key.createdBy,
                ])
            try Self.append(audit, db)
        }
    }

    package func enrollmentKeys() async throws -> [EnrollmentKeyRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM enrollment_keys ORDER BY created_at DESC, id").map(Self.keyRecord)
        }
    }

    package func revokeEnrollmentKey(id: String, at: Date, audit: AuditRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE enrollment_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?", arguments: [at.timeIntervalSince1970, id])
            guard db.changesCount == 1 else { throw StorageError.notFound("enrollment key \(id)") }
            try Self.append(audit, db)
        }
    }

    // MARK: Enrollment

    package func enroll(
        keyID: String, deviceID: String, name: String,
        decide: @Sendable (EnrollmentKeyRecord?, DeviceIdentityRecord?, String?) -> EnrollmentDecision
    ) async throws -> EnrollmentDecision {
        try await pool.write { db in
            let key = try Row.fetchOne(db, sql: "SELECT * FROM enrollment_keys WHERE id = ?", arguments: [keyID]).map(Self.keyRecord)
            let device = try Self.device(db, "id = ?", [deviceID])
            let holder = try String.fetchOne(db, sql: "SELECT id FROM devices WHERE name = ?", arguments: [name])
            let decision = decide(key, device, holder)
            switch decision {
            case .enroll(let record, let audit):
                try Self.insert(record, db)
                try db.execute(sql: "UPDATE enrollment_keys SET uses_spent = uses_spent + 1 WHERE id = ?", arguments: [keyID])
                try Self.append(audit, db)
            case .reenroll(let record, let audit):
                try Self.replace(record, db)
                try Self.append(audit, db)
            case .refuse:
                break
            }
            return decision
        }
    }

    // MARK: Devices

    package func device(id: String) async throws -> DeviceIdentityRecord? {
        try await pool.read { db in try Self.device(db, "id = ?", [id]) }
    }

    package func device(named name: String) async throws -> DeviceIdentityRecord? {
        try await pool.read { db in try Self.device(db, "name = ?", [name]) }
    }

    package func devices(afterName: String?, limit: Int) async throws -> [DeviceIdentityRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM devices WHERE ? IS NULL OR name > ? ORDER BY name LIMIT ?", arguments: [afterName, afterName, limit]
            ).map(Self.deviceRecord)
        }
    }

    package func deviceCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM devices") ?? 0 }
    }

    package func setTags(deviceID: String, _ tags: [String: String], audit: AuditRecord) async throws {
        try await update(deviceID, audit: audit, sql: "UPDATE devices SET tags = ? WHERE id = ?", [IdentityColumns.tagsJSON(tags), deviceID])
    }

    package func requestRotation(deviceID: String, at: Date, audit: AuditRecord) async throws {
        try await update(
            deviceID, audit: audit, sql: "UPDATE devices SET rotation_requested_at = coalesce(rotation_requested_at, ?) WHERE id = ?",
            [at.timeIntervalSince1970, deviceID])
    }

    package func addPendingCredential(deviceID: String, digest: [UInt8]) async throws {
        try await pool.write { db in
            guard let record = try Self.device(db, "id = ?", [deviceID]) else { throw StorageError.notFound("device \(deviceID)") }
            try db.execute(
                sql: "UPDATE devices SET pending_digests = ? WHERE id = ?",
                arguments: [IdentityColumns.pendingColumn(record.addingPending(digest)).map { Data($0) }, deviceID])
        }
    }

    package func completeRotation(deviceID: String, digest: [UInt8], at: Date, audit: AuditRecord) async throws -> Bool {
        try await pool.write { db in
            guard let record = try Self.device(db, "id = ?", [deviceID]), record.revokedAt == nil,
                record.pendingDigests.contains(where: { SecretDigest.equal($0, digest) })
            else { return false }
            try db.execute(
                sql: """
                    UPDATE devices SET credential_digest = ?, pending_digests = NULL, rotation_requested_at = NULL, credential_issued_at = ?
                    WHERE id = ?
                    """,
                arguments: [Data(digest), at.timeIntervalSince1970, deviceID])
            try Self.append(audit, db)
            return true
        }
    }

    package func revokeDevice(id: String, at: Date, audit: AuditRecord) async throws {
        try await update(
            id, audit: audit, sql: "UPDATE devices SET revoked_at = coalesce(revoked_at, ?), pending_digests = NULL, rotation_requested_at = NULL WHERE id = ?",
            [at.timeIntervalSince1970, id])
    }

    package func removeDevice(id: String, audit: AuditRecord) async throws {
        try await update(id, audit: audit, sql: "DELETE FROM devices WHERE id = ?", [id])
    }

    package func touchDevices(_ seen: [String: Date]) async throws {
        guard !seen.isEmpty else { return }
        try await pool.write { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE devices SET last_seen_at = max(coalesce(last_seen_at, 0), ?) WHERE id = ?")
            for (id, at) in seen.sorted(by: { $0.key < $1.key }) {
                try statement.execute(arguments: [at.timeIntervalSince1970, id])
            }
        }
    }

    // MARK: Audit

    package func auditRecords(afterID: Int64, limit: Int) async throws -> [AuditRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM audit_log WHERE id > ? ORDER BY id LIMIT ?", arguments: [afterID, limit]).map { row in
                AuditRecord(
                    id: row["id"], at: Date(timeIntervalSince1970: row["at"]), actor: row["actor"], action: row["action"],
                    subject: row["subject"], detail: row["detail"])
            }
        }
    }

    // MARK: Rows

    /// Runs one change of device `id` with its audit record; ``StorageError/notFound`` when no
    /// row changed.
    private func update(_ id: String, audit: AuditRecord, sql: String, _ arguments: StatementArguments) async throws {
        try await pool.write { db in
            try db.execute(sql: sql, arguments: arguments)
            guard db.changesCount == 1 else { throw StorageError.notFound("device \(id)") }
            try Self.append(audit, db)
        }
    }

    static func append(_ audit: AuditRecord, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO audit_log(at, actor, action, subject, detail) VALUES (?, ?, ?, ?, ?)",
            arguments: [audit.at.timeIntervalSince1970, audit.actor, audit.action, audit.subject, audit.detail])
    }

    private static func insert(_ record: DeviceIdentityRecord, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO devices(id, name, tags, credential_digest, pending_digests, rotation_requested_at, credential_issued_at,
                    created_at, enrolled_with_key, last_seen_at, revoked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: columns(record))
    }

    private static func replace(_ record: DeviceIdentityRecord, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE devices SET name = ?2, tags = ?3, credential_digest = ?4, pending_digests = ?5, rotation_requested_at = ?6,
                    credential_issued_at = ?7, created_at = ?8, enrolled_with_key = ?9, last_seen_at = ?10, revoked_at = ?11
                WHERE id = ?1
                """,
            arguments: columns(record))
    }

    private static func columns(_ record: DeviceIdentityRecord) -> StatementArguments {
        [
            record.id, record.name, IdentityColumns.tagsJSON(record.tags), Data(record.credentialDigest),
            IdentityColumns.pendingColumn(record.pendingDigests).map { Data($0) }, record.rotationRequestedAt?.timeIntervalSince1970,
            record.credentialIssuedAt.timeIntervalSince1970, record.createdAt.timeIntervalSince1970, record.enrolledWithKey,
            record.lastSeenAt?.timeIntervalSince1970, record.revokedAt?.timeIntervalSince1970,
        ]
    }

    private static func device(_ db: Database, _ condition: String, _ arguments: StatementArguments) throws -> DeviceIdentityRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM devices WHERE \(condition)", arguments: arguments).map(deviceRecord)
    }

    private static func deviceRecord(_ row: Row) throws -> DeviceIdentityRecord {
        let digest: Data = row["credential_digest"]
        let pending: Data? = row["pending_digests"]
        return DeviceIdentityRecord(
            id: row["id"], name: row["name"], tags: try IdentityColumns.tags(fromJSON: row["tags"]), credentialDigest: [UInt8](digest),
            pendingDigests: try IdentityColumns.pendingDigests(fromColumn: pending.map { [UInt8]($0) }),
            rotationRequestedAt: IdentityColumns.date(row["rotation_requested_at"]), credentialIssuedAt: Date(timeIntervalSince1970: row["credential_issued_at"]),
            createdAt: Date(timeIntervalSince1970: row["created_at"]), enrolledWithKey: row["enrolled_with_key"],
            lastSeenAt: IdentityColumns.date(row["last_seen_at"]), revokedAt: IdentityColumns.date(row["revoked_at"]))
    }

    private static func keyRecord(_ row: Row) throws -> EnrollmentKeyRecord {
        let digest: Data = row["digest"]
        return EnrollmentKeyRecord(
            id: row["id"], digest: [UInt8](digest), tags: try IdentityColumns.tags(fromJSON: row["tags"]), usesAllowed: row["uses_allowed"],
            usesSpent: row["uses_spent"], expiresAt: IdentityColumns.date(row["expires_at"]), revokedAt: IdentityColumns.date(row["revoked_at"]),
            note: row["note"], createdAt: Date(timeIntervalSince1970: row["created_at"]), createdBy: row["created_by"])
    }
}
