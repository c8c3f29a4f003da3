import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

/// ``EnrollmentPolicy``: every outcome of one enrollment, decided from what the storage read.
@Suite struct EnrollmentPolicyTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let deviceID = "0123456789abcdef0123456789abcdef"
    static let keyID = "00000000000000a1"
    static let secret = "key-secret"

    static func key(
        uses: Int? = 1, spent: Int = 0, expires: Date? = nil, revoked: Date? = nil, tags: [String: String] = ["store": "17"]
    ) -> EnrollmentKeyRecord {
        EnrollmentKeyRecord(
            id: keyID, digest: SecretDigest.of(secret), tags: tags, usesAllowed: uses, usesSpent: spent, expiresAt: expires,
            revokedAt: revoked, note: "", createdAt: now.addingTimeInterval(-3600), createdBy: "admin")
    }

    static func device(key: String? = EnrollmentPolicyTests.keyID, revoked: Date? = nil, name: String = "till-1") -> DeviceIdentityRecord {
        DeviceIdentityRecord(
            id: deviceID, name: name, tags: ["store": "18"], credentialDigest: SecretDigest.of("old"), pendingDigests: [SecretDigest.of("pending")],
            rotationRequestedAt: Date(timeIntervalSince1970: 5),
            credentialIssuedAt: now.addingTimeInterval(-600), createdAt: now.addingTimeInterval(-600), enrolledWithKey: key,
            revokedAt: revoked)
    }

    static func attempt(secret: String = EnrollmentPolicyTests.secret, name: String? = nil, keyID: String = EnrollmentPolicyTests.keyID) -> EnrollmentPolicy.Attempt {
        EnrollmentPolicy.Attempt(
            keyID: keyID, presentedKeyDigest: SecretDigest.of(secret), deviceID: deviceID, requestedName: name,
            credentialDigest: SecretDigest.of("new"), now: now)
    }

    func code(
        _ attempt: EnrollmentPolicy.Attempt = EnrollmentPolicyTests.attempt(), key: EnrollmentKeyRecord?, device: DeviceIdentityRecord? = nil,
        taken: String? = nil, users: Set<String> = []
    ) -> EnrollmentErrorCode? {
        if case .refuse(let failure) = EnrollmentPolicy(configUsers: users).decide(attempt, key: key, device: device, nameTakenBy: taken) {
            return failure.error.code
        }
        return nil
    }

    @Test func aNewDeviceIsEnrolledWithTheKeysTagsAndItsDefaultName() throws {
        let decision = EnrollmentPolicy(configUsers: []).decide(Self.attempt(), key: Self.key(), device: nil, nameTakenBy: nil)
        guard case .enroll(let record, let audit) = decision else { Issue.record("\(decision)"); return }
        #expect(record == DeviceIdentityRecord(
            id: Self.deviceID, name: "device-01234567", tags: ["store": "17"], credentialDigest: SecretDigest.of("new"),
            credentialIssuedAt: Self.now, createdAt: Self.now, enrolledWithKey: Self.keyID))
        #expect(audit.actor == "enrollment" && audit.action == "device.enroll" && audit.subject == "device-01234567")
        #expect(audit.detail == "device \(Self.deviceID) enrolled with key \(Self.keyID), tags store=17")
        #expect(!audit.detail.contains(Self.secret))
    }

    @Test func aNewDeviceGetsTheNameItAskedFor() {
        let decision = EnrollmentPolicy(configUsers: []).decide(Self.attempt(name: "till-9"), key: Self.key(), device: nil, nameTakenBy: nil)
        guard case .enroll(let record, _) = decision else { Issue.record("\(decision)"); return }
        #expect(record.name == "till-9")
    }

    @Test func anUnknownKeyOrAWrongSecretIsTheSameRefusal() {
        #expect(code(key: nil) == .unknownKey)
        #expect(code(Self.attempt(secret: "wrong"), key: Self.key()) == .unknownKey)
        #expect(code(Self.attempt(keyID: "00000000000000b2"), key: Self.key()) == .unknownKey)
        // Before anything about the device: a wrong key learns nothing of it.
        #expect(code(Self.attempt(secret: "wrong"), key: Self.key(), device: Self.device(revoked: Self.now)) == .unknownKey)
    }

    @Test func aKeyMustBeCurrentAndHaveAUseLeft() {
        #expect(code(key: Self.key(revoked: Self.now.addingTimeInterval(-1))) == .revokedKey)
        #expect(code(key: Self.key(expires: Self.now)) == .expiredKey)
        #expect(code(key: Self.key(expires: Self.now.addingTimeInterval(1))) == nil)
        #expect(code(key: Self.key(uses: 1, spent: 1)) == .usedUpKey)
        #expect(code(key: Self.key(uses: 3, spent: 2)) == nil)
        #expect(code(key: Self.key(uses: nil, spent: 10_000)) == nil)
        // Revoked wins over expired, expired over used up.
        #expect(code(key: Self.key(uses: 1, spent: 1, expires: Self.now, revoked: Self.now)) == .revokedKey)
        #expect(code(key: Self.key(uses: 1, spent: 1, expires: Self.now)) == .expiredKey)
    }

    @Test func theNameMustBeValidAndFree() {
        #expect(code(Self.attempt(name: "bad name"), key: Self.key()) == .invalidName)
        #expect(code(Self.attempt(name: String(repeating: "a", count: 65)), key: Self.key()) == .invalidName)
        #expect(code(Self.attempt(name: "till-1"), key: Self.key(), taken: "ffffffffffffffffffffffffffffffff") == .nameTaken)
        #expect(code(Self.attempt(name: "alice"), key: Self.key(), users: ["alice"]) == .nameTaken)
        #expect(code(key: Self.key(), taken: "ffffffffffffffffffffffffffffffff") == .nameTaken)
        // Held by this very device id: not taken.
        #expect(code(Self.attempt(name: "till-1"), key: Self.key(), taken: Self.deviceID) == nil)
    }

    @Test func aKnownDeviceReEnrollsWithItsKeyKeepingNameAndTags() {
        let decision = EnrollmentPolicy(configUsers: ["till-1"]).decide(
            Self.attempt(name: "other"), key: Self.key(uses: 1, spent: 1), device: Self.device(), nameTakenBy: Self.deviceID)
        guard case .reenroll(let record, let audit) = decision else { Issue.record("\(decision)"); return }
        var expected = Self.device()
        expected.credentialDigest = SecretDigest.of("new")
        expected.pendingDigests = []
        expected.rotationRequestedAt = nil
        expected.credentialIssuedAt = Self.now
        #expect(record == expected)
        #expect(audit.action == "device.reenroll" && audit.subject == "till-1" && audit.actor == "enrollment")
    }

    @Test func aKnownDeviceIsRefusedWhenRevokedOrEnrolledByAnotherKey() {
        #expect(code(key: Self.key(), device: Self.device(revoked: Self.now)) == .deviceRevoked)
        #expect(code(key: Self.key(), device: Self.device(key: "00000000000000b2")) == .deviceEnrolled)
        #expect(code(key: Self.key(), device: Self.device(key: nil)) == .deviceEnrolled)
        // Its own key, but revoked or expired: refused; used up: a re-enrollment spends no use.
        #expect(code(key: Self.key(revoked: Self.now), device: Self.device()) == .revokedKey)
        #expect(code(key: Self.key(expires: Self.now), device: Self.device()) == .expiredKey)
        #expect(code(key: Self.key(uses: 1, spent: 1), device: Self.device()) == nil)
    }

    @Test func theRequestIsCheckedBeforeTheStorage() {
        #expect(EnrollmentPolicy.precheck(deviceID: Self.deviceID, requestedName: nil) == nil)
        #expect(EnrollmentPolicy.precheck(deviceID: Self.deviceID, requestedName: "till-1") == nil)
        #expect(EnrollmentPolicy.precheck(deviceID: "not a device id", requestedName: nil)?.error.code == .malformed)
        #expect(EnrollmentPolicy.precheck(deviceID: "a.b", requestedName: nil)?.error.code == .malformed)
        #expect(EnrollmentPolicy.precheck(deviceID: Self.deviceID, requestedName: "till\n1")?.error.code == .invalidName)
        #expect(EnrollmentPolicy.precheck(deviceID: Self.deviceID, requestedName: "")?.error.code == .invalidName)
        #expect(EnrollmentPolicy.defaultName(deviceID: Self.deviceID) == "device-01234567")
    }
}
