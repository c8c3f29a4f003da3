import Foundation
import TetherProtocol

/// Decides one enrollment (docs/server.md "Enrollment") from what the storage read under the
/// key's lock: pure, so ``IdentityStorage/enroll(keyID:deviceID:name:decide:)`` runs it inside
/// its transaction and writes exactly what it returns.
///
/// In order: the key must exist and its secret match (else `unknown_key`, the same answer for
/// both, compared in constant time); a device id known already must not be revoked
/// (`device_revoked`) and must have enrolled with this key (`device_enrolled`), and then gets a
/// fresh credential and keeps its name and tags (a re-enrollment spends no use, so a used-up
/// key may still re-enroll its own device; a revoked or expired key may not). A new device
/// needs a key neither revoked, expired nor used up, and a free, valid name (asked for, or
/// `device-<first 8 of its id>`): not another device's, not a `[[user]]` of the config file.
package struct EnrollmentPolicy: Sendable {
    /// What the device asked for, with the digests made for it.
    package struct Attempt: Sendable, Hashable {
        package var keyID: String
        /// SHA-256 of the key's secret as the device sent it.
        package var presentedKeyDigest: [UInt8]
        package var deviceID: String
        /// The name asked for; nil: the default.
        package var requestedName: String?
        /// SHA-256 of the credential minted for this attempt (used only when it succeeds).
        package var credentialDigest: [UInt8]
        package var now: Date

        package init(
            keyID: String, presentedKeyDigest: [UInt8], deviceID: String, requestedName: String?, credentialDigest: [UInt8], now: Date
        ) {
            self.keyID = keyID
            self.presentedKeyDigest = presentedKeyDigest
            self.deviceID = deviceID
            self.requestedName = requestedName
            self.credentialDigest = credentialDigest
            self.now = now
        }

        /// The name a new device gets: the one asked for, or the default.
        package var name: String { requestedName ?? EnrollmentPolicy.defaultName(deviceID: deviceID) }
    }

    /// The audit actor of every enrollment.
    package static let actor = "enrollment"

    /// Names of the config file's `[[user]]`s: no device may take one.
    package var configUsers: Set<String>

    package init(configUsers: Set<String>) {
        self.configUsers = configUsers
    }

    /// `device-` and the first 8 characters of the device id.
    package static func defaultName(deviceID: String) -> String { "device-" + String(deviceID.prefix(8)) }

    /// A refusal that needs no storage: a request whose device id or name cannot be right.
    package static func precheck(deviceID: String, requestedName: String?) -> EnrollmentFailure? {
        // A dot would split the credential's text (`tdc1.<id>.<secret>`).
        guard DeviceReport.isValidDeviceID(deviceID), !deviceID.contains(".") else {
            return EnrollmentFailure(.malformed, "device_id is not a device id")
        }
        if let name = requestedName, !DeviceIdentityRules.isValidName(name) {
            return EnrollmentFailure(.invalidName, "the name asked for is not a device name")
        }
        return nil
    }

    package func decide(
        _ attempt: Attempt, key: EnrollmentKeyRecord?, device: DeviceIdentityRecord?, nameTakenBy: String?
    ) -> EnrollmentDecision {
        guard let key, key.id == attempt.keyID, SecretDigest.equal(key.digest, attempt.presentedKeyDigest) else {
            return .refuse(EnrollmentFailure(.unknownKey, "no enrollment key matches"))
        }
        if let device {
            if device.revokedAt != nil {
                return .refuse(EnrollmentFailure(.deviceRevoked, "device \(device.name) (\(device.id)) was revoked"))
            }
            guard device.enrolledWithKey == key.id else {
                return .refuse(EnrollmentFailure(.deviceEnrolled, "device \(device.id) is enrolled as \(device.name) with another key"))
            }
        }
        if let refusal = Self.keyRefusal(key, now: attempt.now, spendsUse: device == nil) { return .refuse(refusal) }
        if var device {
            device.credentialDigest = attempt.credentialDigest
            device.pendingDigests = []
            device.rotationRequestedAt = nil
            device.credentialIssuedAt = attempt.now
            let audit = AuditRecord(
                at: attempt.now, actor: Self.actor, action: "device.reenroll", subject: device.name,
                detail: "device \(device.id) enrolled again with key \(key.id): new credential")
            return .reenroll(device, audit: audit)
        }
        let name = attempt.name
        guard DeviceIdentityRules.isValidName(name) else {
            return .refuse(EnrollmentFailure(.invalidName, "\(name.debugDescription.prefix(80)) is not a device name"))
        }
        if configUsers.contains(name) || (nameTakenBy != nil && nameTakenBy != attempt.deviceID) {
            return .refuse(EnrollmentFailure(.nameTaken, "the name \(name) is taken"))
        }
        let record = DeviceIdentityRecord(
            id: attempt.deviceID, name: name, tags: key.tags, credentialDigest: attempt.credentialDigest, credentialIssuedAt: attempt.now,
            createdAt: attempt.now, enrolledWithKey: key.id)
        let tags = key.tags.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        let audit = AuditRecord(
            at: attempt.now, actor: Self.actor, action: "device.enroll", subject: name,
            detail: "device \(attempt.deviceID) enrolled with key \(key.id)" + (tags.isEmpty ? "" : ", tags \(tags)"))
        return .enroll(record, audit: audit)
    }

    /// Why `key` cannot enroll now: revoked, expired, or (when the enrollment spends a use) used up.
    static func keyRefusal(_ key: EnrollmentKeyRecord, now: Date, spendsUse: Bool) -> EnrollmentFailure? {
        if key.revokedAt != nil { return EnrollmentFailure(.revokedKey, "enrollment key \(key.id) was revoked") }
        if let expires = key.expiresAt, expires <= now { return EnrollmentFailure(.expiredKey, "enrollment key \(key.id) has expired") }
        if spendsUse, let allowed = key.usesAllowed, key.usesSpent >= allowed {
            return EnrollmentFailure(.usedUpKey, "enrollment key \(key.id) has enrolled its \(allowed) device\(allowed == 1 ? "" : "s")")
        }
        return nil
    }
}
