import Foundation
import TetherProtocol

/// The fleet's identities (docs/server.md "Enrollment"): enrolled devices with their tags and
/// credential digests, the enrollment keys that admit them, and the audit trail of every change
/// to either. Kept by both storages and shared by the instances of one PostgreSQL; the
/// `[[user]]`s of the config file are not here (they are static identities, `source = config`).
///
/// Secrets never reach the storage: only SHA-256 digests of credentials and keys, compared by
/// the caller in constant time. Every write that changes an identity takes the audit record
/// that describes it and writes both in one transaction.
package protocol IdentityStorage: Sendable {
    // MARK: Enrollment keys

    func createEnrollmentKey(_ key: EnrollmentKeyRecord, audit: AuditRecord) async throws
    /// Every key, newest first (revoked and spent ones too: the console shows them).
    func enrollmentKeys() async throws -> [EnrollmentKeyRecord]
    /// Marks the key revoked. Throws ``StorageError/notFound`` for an unknown id.
    func revokeEnrollmentKey(id: String, at: Date, audit: AuditRecord) async throws

    // MARK: Enrollment

    /// One enrollment, in one transaction (on PostgreSQL under a lock of the key's row, so a
    /// single-use key raced on two instances admits one device): reads the key, the device
    /// id's row and which device holds `name` (the name a new device would get: the one asked
    /// for, or its default), asks `decide` (pure: ``EnrollmentDecision``) and writes what it
    /// says — the new device or its fresh credential, the key's use, the audit record — or
    /// nothing.
    func enroll(
        keyID: String, deviceID: String, name: String,
        decide: @Sendable (_ key: EnrollmentKeyRecord?, _ device: DeviceIdentityRecord?, _ nameTakenBy: String?) -> EnrollmentDecision
    ) async throws -> EnrollmentDecision

    // MARK: Devices

    func device(id: String) async throws -> DeviceIdentityRecord?
    func device(named name: String) async throws -> DeviceIdentityRecord?
    /// Devices in name order after `afterName`, at most `limit` (the console and the CLI page).
    func devices(afterName: String?, limit: Int) async throws -> [DeviceIdentityRecord]
    func deviceCount() async throws -> Int
    /// Replaces the device's tags. Throws ``StorageError/notFound``.
    func setTags(deviceID: String, _ tags: [String: String], audit: AuditRecord) async throws
    /// Hands out a new credential: its digest is kept as pending beside the current one, both
    /// valid until ``completeRotation(deviceID:digest:at:)``.
    func beginRotation(deviceID: String, pendingDigest: [UInt8], at: Date, audit: AuditRecord) async throws
    /// The device showed it holds the pending credential (acknowledged it, or bound with it):
    /// it becomes the only one. False when `digest` is not the pending one (nothing changes).
    func completeRotation(deviceID: String, digest: [UInt8], at: Date) async throws -> Bool
    /// Marks the device revoked (its credentials stop working; it stays listed).
    func revokeDevice(id: String, at: Date, audit: AuditRecord) async throws
    /// Forgets the device (its id may enroll again).
    func removeDevice(id: String, audit: AuditRecord) async throws
    /// When each device was last seen (binds), written in batches.
    func touchDevices(_ seen: [String: Date]) async throws

    // MARK: Audit

    /// Audit records with an id above `afterID`, oldest first, at most `limit`.
    func auditRecords(afterID: Int64, limit: Int) async throws -> [AuditRecord]
}

/// An enrolled device.
package struct DeviceIdentityRecord: Sendable, Hashable, Codable {
    /// The device id the agent made (its state database's; the ledger's).
    package var id: String
    package var name: String
    package var tags: [String: String]
    /// SHA-256 of the credential's secret.
    package var credentialDigest: [UInt8]
    /// A rotation handed out and not yet confirmed by the device.
    package var pendingDigest: [UInt8]?
    package var credentialIssuedAt: Date
    package var createdAt: Date
    /// The key it enrolled with (nil: the key was removed since).
    package var enrolledWithKey: String?
    package var lastSeenAt: Date?
    package var revokedAt: Date?

    package init(
        id: String, name: String, tags: [String: String], credentialDigest: [UInt8], pendingDigest: [UInt8]? = nil,
        credentialIssuedAt: Date, createdAt: Date, enrolledWithKey: String?, lastSeenAt: Date? = nil, revokedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.tags = tags
        self.credentialDigest = credentialDigest
        self.pendingDigest = pendingDigest
        self.credentialIssuedAt = credentialIssuedAt
        self.createdAt = createdAt
        self.enrolledWithKey = enrolledWithKey
        self.lastSeenAt = lastSeenAt
        self.revokedAt = revokedAt
    }
}

/// An enrollment key (its secret only as a digest).
package struct EnrollmentKeyRecord: Sendable, Hashable, Codable {
    /// 16 hex digits, the middle of the key's text (``EnrollmentKeyText``).
    package var id: String
    package var digest: [UInt8]
    /// Given to every device the key enrolls.
    package var tags: [String: String]
    /// How many devices it may enroll; nil: reusable.
    package var usesAllowed: Int?
    package var usesSpent: Int
    package var expiresAt: Date?
    package var revokedAt: Date?
    package var note: String
    package var createdAt: Date
    /// Who created it (the admin credential's name, `admin` for the admin token, or the
    /// console's signed-in operator).
    package var createdBy: String

    package init(
        id: String, digest: [UInt8], tags: [String: String], usesAllowed: Int?, usesSpent: Int = 0, expiresAt: Date?,
        revokedAt: Date? = nil, note: String, createdAt: Date, createdBy: String
    ) {
        self.id = id
        self.digest = digest
        self.tags = tags
        self.usesAllowed = usesAllowed
        self.usesSpent = usesSpent
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.note = note
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}

/// Who changed which identity, how, and when.
package struct AuditRecord: Sendable, Hashable, Codable {
    /// Assigned by the storage (0 before it is written).
    package var id: Int64
    package var at: Date
    /// Who: `admin`, a console operator, `enrollment` (a device enrolling itself).
    package var actor: String
    /// What: `enroll-key.create`, `enroll-key.revoke`, `device.enroll`, `device.reenroll`,
    /// `device.tag`, `device.rotate`, `device.revoke`, `device.remove`, `grant.set`, `grant.revoke`.
    package var action: String
    /// The key id, device name or grant subject it applies to.
    package var subject: String
    /// What changed, for people (never a secret).
    package var detail: String

    package init(id: Int64 = 0, at: Date, actor: String, action: String, subject: String, detail: String) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.subject = subject
        self.detail = detail
    }
}

/// What one enrollment does, decided from what the storage read (pure; the storage writes it).
package enum EnrollmentDecision: Sendable, Hashable {
    /// A new device: insert it and spend one use of the key.
    case enroll(DeviceIdentityRecord, audit: AuditRecord)
    /// The device enrolled before with this key (its agent lost the answer, or its token file):
    /// replace its credential, spend no use.
    case reenroll(DeviceIdentityRecord, audit: AuditRecord)
    /// Nothing is written.
    case refuse(EnrollmentFailure)
}
