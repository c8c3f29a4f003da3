import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The fleet's identities (issue 48), the same on both storages: keys, enrollment decided by
/// ``EnrollmentPolicy`` inside the storage's transaction, devices and the audit trail.
extension StorageConformanceTests {
    static func key(_ id: String, uses: Int?, tags: [String: String] = ["store": "17"], at: Date) -> (EnrollmentKeyRecord, String) {
        let secret = CredentialMinter.newSecret()
        let record = EnrollmentKeyRecord(
            id: id, digest: SecretDigest.of(secret), tags: tags, usesAllowed: uses, expiresAt: nil, note: "test", createdAt: at,
            createdBy: "admin")
        return (record, secret)
    }

    static func audit(_ action: String, _ subject: String, at: Date) -> AuditRecord {
        AuditRecord(at: at, actor: "admin", action: action, subject: subject, detail: "")
    }

    /// One enrollment through the storage as the route makes it.
    static func enroll(
        _ storage: any IdentityStorage, key: String, secret: String, device: String, name: String? = nil, configUsers: Set<String> = [],
        at: Date
    ) async throws -> EnrollmentDecision {
        let attempt = EnrollmentPolicy.Attempt(
            keyID: key, presentedKeyDigest: SecretDigest.of(secret), deviceID: device, requestedName: name,
            credentialDigest: SecretDigest.of("credential of \(device) at \(at.timeIntervalSince1970)"), now: at)
        let policy = EnrollmentPolicy(configUsers: configUsers)
        return try await storage.enroll(keyID: key, deviceID: device, name: attempt.name) { key, record, holder in
            policy.decide(attempt, key: key, device: record, nameTakenBy: holder)
        }
    }

    static let deviceA = "0123456789abcdef0123456789abcdef"
    static let deviceB = "fedcba9876543210fedcba9876543210"

    @Test(arguments: StorageBackend.allCases)
    func keysAreKeptListedAndRevokedWithTheirAudit(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (older, _) = Self.key("00000000000000a1", uses: 3, at: now)
            var (newer, _) = Self.key("00000000000000b2", uses: nil, tags: [:], at: now.addingTimeInterval(60))
            newer.expiresAt = now.addingTimeInterval(3600)
            try await storage.createEnrollmentKey(older, audit: Self.audit("enroll-key.create", older.id, at: now))
            try await storage.createEnrollmentKey(newer, audit: Self.audit("enroll-key.create", newer.id, at: now))
            #expect(try await storage.enrollmentKeys() == [newer, older])
            try await storage.revokeEnrollmentKey(id: older.id, at: now.addingTimeInterval(5), audit: Self.audit("enroll-key.revoke", older.id, at: now))
            #expect(try await storage.enrollmentKeys().last?.revokedAt == now.addingTimeInterval(5))
            await #expect(throws: StorageError.self) {
                try await storage.revokeEnrollmentKey(id: "ffffffffffffffff", at: now, audit: Self.audit("enroll-key.revoke", "x", at: now))
            }
            let trail = try await storage.auditRecords(afterID: 0, limit: 10)
            #expect(trail.map(\.action) == ["enroll-key.create", "enroll-key.create", "enroll-key.revoke"])
            #expect(trail.map(\.id) == trail.map(\.id).sorted() && Set(trail.map(\.id)).count == 3)
            #expect(try await storage.auditRecords(afterID: trail[0].id, limit: 1) == [trail[1]])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func anEnrollmentWritesTheDeviceTheUseAndTheAudit(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (key, secret) = Self.key("00000000000000a1", uses: 2, at: now)
            try await storage.createEnrollmentKey(key, audit: Self.audit("enroll-key.create", key.id, at: now))
            let decision = try await Self.enroll(storage, key: key.id, secret: secret, device: Self.deviceA, name: "till-1", at: now)
            guard case .enroll(let record, _) = decision else { Issue.record("not enrolled: \(decision)"); return }
            #expect(record.name == "till-1" && record.tags == ["store": "17"] && record.enrolledWithKey == key.id)
            #expect(try await storage.device(id: Self.deviceA) == record)
            #expect(try await storage.device(named: "till-1") == record)
            #expect(try await storage.enrollmentKeys().first?.usesSpent == 1)
            #expect(try await storage.auditRecords(afterID: 0, limit: 10).map { "\($0.actor) \($0.action) \($0.subject)" } == [
                "admin enroll-key.create \(key.id)", "enrollment device.enroll till-1",
            ])
            // The default name; the same name for another device is taken.
            let second = try await Self.enroll(storage, key: key.id, secret: secret, device: Self.deviceB, at: now)
            guard case .enroll(let other, _) = second else { Issue.record("not enrolled: \(second)"); return }
            #expect(other.name == "device-fedcba98")
            #expect(try await storage.deviceCount() == 2)
        }
    }

    /// A device enrolling again with its key (it lost the answer) gets a new credential and
    /// spends no use, even of a used-up single-use key.
    @Test(arguments: StorageBackend.allCases)
    func reEnrollingTheSameDeviceSpendsNoUse(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (key, secret) = Self.key("00000000000000a1", uses: 1, at: now)
            try await storage.createEnrollmentKey(key, audit: Self.audit("enroll-key.create", key.id, at: now))
            let first = try await Self.enroll(storage, key: key.id, secret: secret, device: Self.deviceA, name: "till-1", at: now)
            guard case .enroll(let enrolled, _) = first else { Issue.record("not enrolled: \(first)"); return }
            let later = now.addingTimeInterval(30)
            let again = try await Self.enroll(storage, key: key.id, secret: secret, device: Self.deviceA, name: "till-1", at: later)
            guard case .reenroll(let record, _) = again else { Issue.record("not re-enrolled: \(again)"); return }
            #expect(record.credentialDigest != enrolled.credentialDigest && record.credentialIssuedAt == later)
            #expect(try await storage.device(id: Self.deviceA) == record)
            #expect(try await storage.enrollmentKeys().first?.usesSpent == 1)
            #expect(try await storage.auditRecords(afterID: 0, limit: 10).map(\.action) == ["enroll-key.create", "device.enroll", "device.reenroll"])
        }
    }

    /// A refused enrollment writes nothing: no device, no use, no audit record.
    @Test(arguments: StorageBackend.allCases)
    func aRefusedEnrollmentWritesNothing(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (key, secret) = Self.key("00000000000000a1", uses: 5, at: now)
            try await storage.createEnrollmentKey(key, audit: Self.audit("enroll-key.create", key.id, at: now))
            let refusals: [EnrollmentDecision] = [
                try await Self.enroll(storage, key: key.id, secret: CredentialMinter.newSecret(), device: Self.deviceA, at: now),
                try await Self.enroll(storage, key: "00000000000000ff", secret: secret, device: Self.deviceA, at: now),
                try await Self.enroll(storage, key: key.id, secret: secret, device: Self.deviceA, name: "alice", configUsers: ["alice"], at: now),
            ]
            #expect(refusals.map { decision -> EnrollmentErrorCode? in
                if case .refuse(let failure) = decision { return failure.error.code }
                return nil
            } == [.unknownKey, .unknownKey, .nameTaken])
            #expect(try await storage.device(id: Self.deviceA) == nil)
            #expect(try await storage.deviceCount() == 0)
            #expect(try await storage.enrollmentKeys().first?.usesSpent == 0)
            #expect(try await storage.auditRecords(afterID: 0, limit: 10).count == 1)
        }
    }

    /// Two devices race one single-use key, each through its own storage instance (on
    /// PostgreSQL: two pools, as two servers): exactly one is enrolled.
    @Test(arguments: StorageBackend.allCases)
    func aSingleUseKeyRacedFromTwoInstancesAdmitsOneDevice(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, place in
            for round in 0..<5 {
                let (key, secret) = Self.key(String(format: "%016lx", 0xa0 + round), uses: 1, at: now)
                try await storage.createEnrollmentKey(key, audit: Self.audit("enroll-key.create", key.id, at: now))
                let devices = (0..<2).map { String(format: "%032lx", round * 16 + $0 + 1) }
                let decisions = try await place.withInstance { other in
                    async let one = Self.enroll(storage, key: key.id, secret: secret, device: devices[0], name: "r\(round)-one", at: now)
                    async let two = Self.enroll(other, key: key.id, secret: secret, device: devices[1], name: "r\(round)-two", at: now)
                    return try await [one, two]
                }
                let enrolled = decisions.filter { if case .enroll = $0 { true } else { false } }
                let usedUp = decisions.filter { if case .refuse(let f) = $0 { f.error.code == .usedUpKey } else { false } }
                #expect(enrolled.count == 1 && usedUp.count == 1, "round \(round): \(decisions)")
                #expect(try await storage.enrollmentKeys().first { $0.id == key.id }?.usesSpent == 1)
            }
            #expect(try await storage.deviceCount() == 5)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func devicesAreTaggedRotatedRevokedRemovedAndSeen(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (key, secret) = Self.key("00000000000000a1", uses: nil, at: now)
            try await storage.createEnrollmentKey(key, audit: Self.audit("enroll-key.create", key.id, at: now))
            for (device, name) in [(Self.deviceA, "till-b"), (Self.deviceB, "till-a")] {
                _ = try await Self.enroll(storage, key: key.id, secret: secret, device: device, name: name, at: now)
            }
            #expect(try await storage.devices(afterName: nil, limit: 10).map(\.name) == ["till-a", "till-b"])
            #expect(try await storage.devices(afterName: "till-a", limit: 10).map(\.name) == ["till-b"])
            #expect(try await storage.devices(afterName: nil, limit: 1).map(\.name) == ["till-a"])

            try await storage.setTags(deviceID: Self.deviceA, ["store": "18", "role": "kiosk"], audit: Self.audit("device.tag", "till-b", at: now))
            #expect(try await storage.device(id: Self.deviceA)?.tags == ["store": "18", "role": "kiosk"])

            // Rotation: asked for, handed out more than the limit (the oldest go), completed by
            // one of those kept.
            try await storage.requestRotation(deviceID: Self.deviceA, at: now, audit: Self.audit("device.rotate", "till-b", at: now))
            try await storage.requestRotation(deviceID: Self.deviceA, at: now.addingTimeInterval(5), audit: Self.audit("device.rotate", "till-b", at: now))
            #expect(try await storage.device(id: Self.deviceA)?.rotationRequestedAt == now, "asked again: the first request stands")
            let handed = (1...5).map { SecretDigest.of("next-\($0)") }
            for digest in handed { try await storage.addPendingCredential(deviceID: Self.deviceA, digest: digest) }
            #expect(try await storage.device(id: Self.deviceA)?.pendingDigests == Array(handed.suffix(DeviceIdentityRecord.maxPendingDigests)))
            await #expect(throws: StorageError.self) { try await storage.addPendingCredential(deviceID: "no-such-device", digest: handed[0]) }
            let completion = Self.audit("device.rotated", "till-b", at: now)
            #expect(try await !storage.completeRotation(deviceID: Self.deviceA, digest: SecretDigest.of("other"), at: now, audit: completion))
            #expect(try await !storage.completeRotation(deviceID: Self.deviceA, digest: handed[0], at: now, audit: completion), "dropped")
            let rotatedAt = now.addingTimeInterval(10)
            #expect(try await storage.completeRotation(deviceID: Self.deviceA, digest: handed[2], at: rotatedAt, audit: completion))
            let rotated = try await storage.device(id: Self.deviceA)
            #expect(rotated?.credentialDigest == handed[2] && rotated?.pendingDigests == [] && rotated?.rotationRequestedAt == nil)
            #expect(rotated?.credentialIssuedAt == rotatedAt)
            #expect(try await !storage.completeRotation(deviceID: Self.deviceA, digest: handed[3], at: rotatedAt, audit: completion), "over")

            try await storage.touchDevices([Self.deviceA: now.addingTimeInterval(100), Self.deviceB: now.addingTimeInterval(50)])
            try await storage.touchDevices([Self.deviceA: now.addingTimeInterval(90)])
            #expect(try await storage.device(id: Self.deviceA)?.lastSeenAt == now.addingTimeInterval(100))
            #expect(try await storage.device(id: Self.deviceB)?.lastSeenAt == now.addingTimeInterval(50))

            try await storage.revokeDevice(id: Self.deviceB, at: now.addingTimeInterval(200), audit: Self.audit("device.revoke", "till-a", at: now))
            #expect(try await storage.device(id: Self.deviceB)?.revokedAt == now.addingTimeInterval(200))
            // A revoked device cannot enroll again until removed.
            let refused = try await Self.enroll(storage, key: key.id, secret: secret, device: Self.deviceB, at: now)
            #expect(refused == .refuse(EnrollmentFailure(.deviceRevoked, "device till-a (\(Self.deviceB)) was revoked")))
            try await storage.removeDevice(id: Self.deviceB, audit: Self.audit("device.remove", "till-a", at: now))
            #expect(try await storage.device(id: Self.deviceB) == nil)
            guard case .enroll = try await Self.enroll(storage, key: key.id, secret: secret, device: Self.deviceB, at: now) else {
                Issue.record("a removed device did not enroll again")
                return
            }
            for change in [
                { try await storage.setTags(deviceID: "ffffffffffffffffffffffffffffffff", [:], audit: Self.audit("device.tag", "x", at: self.now)) },
                { try await storage.revokeDevice(id: "ffffffffffffffffffffffffffffffff", at: self.now, audit: Self.audit("device.revoke", "x", at: self.now)) },
                { try await storage.removeDevice(id: "ffffffffffffffffffffffffffffffff", audit: Self.audit("device.remove", "x", at: self.now)) },
            ] as [@Sendable () async throws -> Void] {
                await #expect(throws: StorageError.self) { try await change() }
            }
            #expect(try await storage.auditRecords(afterID: 0, limit: 100).map(\.action) == [
                "enroll-key.create", "device.enroll", "device.enroll", "device.tag", "device.rotate", "device.rotate", "device.rotated", "device.revoke", "device.remove",
                "device.enroll",
            ])
        }
    }
}
