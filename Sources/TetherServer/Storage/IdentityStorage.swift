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
    /// Marks the device due for a new credential (an operator asked; docs/server.md
    /// "Rotation"): it is handed one at its next bind or report. Throws ``StorageError/notFound``.
    func requestRotation(deviceID: String, at: Date, audit: AuditRecord) async throws
    /// A new credential is being handed to the device: its digest is kept as pending beside the
    /// current one and the ones handed out before it (the newest
    /// ``DeviceIdentityRecord/maxPendingDigests``), each valid until the rotation completes.
    /// Throws ``StorageError/notFound``.
    func addPendingCredential(deviceID: String, digest: [UInt8]) async throws
    /// The device showed it holds one of its pending credentials (acknowledged it, or bound with
    /// it): that one becomes its only credential, issued `at`, and the rotation is over. False
    /// when `digest` is not pending (nothing changes).
    func completeRotation(deviceID: String, digest: [UInt8], at: Date, audit: AuditRecord) async throws -> Bool
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
    /// Credentials handed out by a rotation the device has not yet confirmed, oldest first (at
    /// most ``maxPendingDigests``; each is SHA-256 of a secret).
    package var pendingDigests: [[UInt8]]
    /// When an operator asked for a new credential (nil: not asked, or handed out since).
    package var rotationRequestedAt: Date?
    package var credentialIssuedAt: Date
    package var createdAt: Date
    /// The key it enrolled with (nil: the key was removed since).
    package var enrolledWithKey: String?
    package var lastSeenAt: Date?
    package var revokedAt: Date?

    package init(
        id: String, name: String, tags: [String: String], credentialDigest: [UInt8], pendingDigests: [[UInt8]] = [],
        rotationRequestedAt: Date? = nil, credentialIssuedAt: Date, createdAt: Date, enrolledWithKey: String?, lastSeenAt: Date? = nil, revokedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.tags = tags
        self.credentialDigest = credentialDigest
        self.pendingDigests = pendingDigests
        self.rotationRequestedAt = rotationRequestedAt
        self.credentialIssuedAt = credentialIssuedAt
        self.createdAt = createdAt
        self.enrolledWithKey = enrolledWithKey
        self.lastSeenAt = lastSeenAt
        self.revokedAt = revokedAt
    }
}

extension DeviceIdentityRecord {
    /// How many pending credentials a device keeps: a credential handed out on a connection that
    /// broke before the device's acknowledgement may still have been written by it, so a later
    /// hand-over keeps it valid instead of replacing it (docs/server.md "Rotation").
    package static let maxPendingDigests = 4

    /// A rotation is under way: asked for, or handed out and not yet confirmed.
    package var rotationPending: Bool { rotationRequestedAt != nil || !pendingDigests.isEmpty }

    /// Whether the device is due a new credential at `now`: a rotation was asked for or
    /// handed out, or its credential is older than `maxAge` (`[devices]
    /// credential_max_age_days`; nil: no limit).
    package func rotationDue(at now: Date, maxAge: Duration?) -> Bool {
        if rotationPending { return true }
        guard let maxAge else { return false }
        return now.timeIntervalSince(credentialIssuedAt) >= Double(maxAge.components.seconds)
    }

    /// `pendingDigests` with `digest` added, the oldest dropped past the limit.
    package func addingPending(_ digest: [UInt8]) -> [[UInt8]] {
        Array((pendingDigests + [digest]).suffix(Self.maxPendingDigests))
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
