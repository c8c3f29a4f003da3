import Foundation
import Synchronization
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// ``DeviceCredentials`` over a real SQLite storage: current and pending secrets, revocation,
/// the cache and its invalidation, last-seen batches.
@Suite struct DeviceCredentialsTests {
    static let id = "0123456789abcdef0123456789abcdef"

    static func audit(_ action: String) -> AuditRecord { AuditRecord(at: Date(), actor: "admin", action: action, subject: "till-1", detail: "") }

    /// A storage holding one device enrolled with `secret`.
    static func withDevice(secret: String, _ body: (SQLiteServerStorage, DeviceCredentials) async throws -> Void) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = try SQLiteServerStorage(directory: dir.path)
        let key = EnrollmentKeyRecord(
            id: "00000000000000a1", digest: SecretDigest.of("k"), tags: [:], usesAllowed: nil, expiresAt: nil, note: "", createdAt: Date(),
            createdBy: "admin")
        try await storage.createEnrollmentKey(key, audit: audit("enroll-key.create"))
        let record = DeviceIdentityRecord(
            id: id, name: "till-1", tags: [:], credentialDigest: SecretDigest.of(secret), credentialIssuedAt: Date(), createdAt: Date(),
            enrolledWithKey: key.id)
        _ = try await storage.enroll(keyID: key.id, deviceID: id, name: "till-1") { _, _, _ in .enroll(record, audit: audit("device.enroll")) }
        try await body(storage, DeviceCredentials(storage: storage, now: { Date() }))
        try await storage.close()
    }

    static func credential(_ secret: String, device: String = id) -> DeviceCredential { DeviceCredential(deviceID: device, secret: secret) }

    @Test func theCurrentSecretIsAcceptedAndNothingElse() async throws {
        try await Self.withDevice(secret: "one") { (_, credentials) async throws in
            #expect(try await credentials.authenticate(Self.credential("one"))?.name == "till-1")
            #expect(try await credentials.authenticate(Self.credential("two")) == nil)
            #expect(try await credentials.authenticate(Self.credential("one", device: "ffffffffffffffffffffffffffffffff")) == nil)
        }
    }

    @Test func anyPendingSecretCompletesTheRotation() async throws {
        try await Self.withDevice(secret: "one") { (storage, credentials) async throws in
            try await storage.requestRotation(deviceID: Self.id, at: Date(), audit: Self.audit("device.rotate"))
            // Two handed out (the first on a connection that broke): either is the device's.
            try await storage.addPendingCredential(deviceID: Self.id, digest: SecretDigest.of("two"))
            try await storage.addPendingCredential(deviceID: Self.id, digest: SecretDigest.of("three"))
            credentials.invalidate(deviceID: Self.id)
            #expect(try await credentials.authenticate(Self.credential("one")) != nil)
            #expect(try await credentials.authenticate(Self.credential("two")) != nil)
            let record = try await storage.device(id: Self.id)
            #expect(record?.credentialDigest == SecretDigest.of("two") && record?.pendingDigests == [] && record?.rotationRequestedAt == nil)
            #expect(try await storage.auditRecords(afterID: 0, limit: 10).last?.action == "device.rotated")
            // The old one and the other pending one stopped working once the new one was shown.
            #expect(try await credentials.authenticate(Self.credential("one")) == nil)
            #expect(try await credentials.authenticate(Self.credential("three")) == nil)
        }
    }

    /// Another instance handed the device a credential (its notification not here yet): the
    /// cached record does not know it, one read of the storage does.
    @Test func aCredentialNewerThanTheCachedRecordIsAccepted() async throws {
        try await Self.withDevice(secret: "one") { (storage, credentials) async throws in
            #expect(try await credentials.authenticate(Self.credential("one")) != nil, "cached now")
            try await storage.addPendingCredential(deviceID: Self.id, digest: SecretDigest.of("two"))
            #expect(try await credentials.authenticate(Self.credential("two")) != nil)
            #expect(try await storage.device(id: Self.id)?.credentialDigest == SecretDigest.of("two"), "the bind completed the rotation")
            #expect(try await credentials.authenticate(Self.credential("three")) == nil)
        }
    }

    @Test func aCompletedRotationIsToldOnce() async throws {
        try await Self.withDevice(secret: "one") { (storage, _) async throws in
            let told = Mutex<[String]>([])
            let credentials = DeviceCredentials(storage: storage, now: { Date() }) { record in told.withLock { $0.append(record.name) } }
            try await storage.addPendingCredential(deviceID: Self.id, digest: SecretDigest.of("two"))
            let record = try #require(try await storage.device(id: Self.id))
            #expect(try await credentials.completeRotation(of: record, digest: SecretDigest.of("two"), how: "acknowledged"))
            #expect(try await !credentials.completeRotation(of: record, digest: SecretDigest.of("two"), how: "acknowledged"))
            #expect(told.withLock { $0 } == ["till-1"])
        }
    }

    @Test func aChangeCountsOnceItIsAnnounced() async throws {
        try await Self.withDevice(secret: "one") { (storage, credentials) async throws in
            #expect(try await credentials.authenticate(Self.credential("one")) != nil)
            try await storage.revokeDevice(id: Self.id, at: Date(), audit: Self.audit("device.revoke"))
            // Cached: the change is not known until it is announced (locally, or by the cluster bus).
            #expect(try await credentials.authenticate(Self.credential("one")) != nil)
            credentials.invalidate(named: "till-2")
            #expect(try await credentials.authenticate(Self.credential("one")) != nil)
            credentials.invalidate(named: "till-1")
            #expect(try await credentials.authenticate(Self.credential("one")) == nil)
        }
    }

    @Test func whenDevicesWereSeenIsWrittenInOneBatch() async throws {
        try await Self.withDevice(secret: "one") { (storage, credentials) async throws in
            #expect(try await storage.device(id: Self.id)?.lastSeenAt == nil)
            _ = try await credentials.authenticate(Self.credential("one"))
            try await credentials.flushSeen()
            #expect(try await storage.device(id: Self.id)?.lastSeenAt != nil)
            try await credentials.flushSeen()
        }
    }
}
