import Foundation
import Logging
import TetherProtocol

/// Credential rotation (issue 48; docs/server.md "Rotation"): an enrolled device due a new
/// credential — an operator asked (`admin device rotate`), or its credential is older than
/// `[devices] credential_max_age_days` — is handed one over a sync connection it binds or
/// reports on (``ServerConnection/offerCredential(to:)``). Only the new secret's digest is
/// stored, as pending beside the current one; the secret exists only in the message. The
/// device writes it to its token file and acknowledges it (or binds with it after a crash), and
/// only then does the old one stop working.
extension SyncService {
    /// A credential made for a device, its digest stored as pending.
    package struct PreparedCredential: Sendable {
        package var credential: DeviceCredential
        package var digest: [UInt8]
    }

    /// A new credential for the device when it is due one (nil: not due, revoked, unknown, or
    /// the storage failed — logged here; a later bind or report tries again).
    func prepareCredential(for deviceID: String) async -> PreparedCredential? {
        do {
            guard let record = try await deviceCredentials.record(deviceID), record.revokedAt == nil,
                record.rotationDue(at: now(), maxAge: devices.credentialMaxAge)
            else { return nil }
            let credential = IdentitySecrets.newCredential(deviceID: deviceID)
            let digest = IdentitySecrets.digest(credential.secret)
            try await storage.identity.addPendingCredential(deviceID: deviceID, digest: digest)
            deviceCredentials.invalidate(deviceID: deviceID)
            logger.notice("device credential handed over", metadata: [
                "device": "\(record.name)", "device_id": "\(deviceID)",
                "reason": "\(record.rotationPending ? "rotation requested" : "credential older than credential_max_age_days")",
            ])
            return PreparedCredential(credential: credential, digest: digest)
        } catch {
            logger.error("cannot hand a device a new credential; its next bind or report tries again", metadata: [
                "device_id": "\(deviceID)", "error": "\(Self.oneLine(error))",
            ])
            return nil
        }
    }

    /// The device acknowledged the credential handed to it on a connection here: it becomes
    /// its only one, and every instance forgets the old.
    func credentialAccepted(deviceID: String, digest: [UInt8]) async {
        do {
            guard let record = try await deviceCredentials.record(deviceID) else { return }
            if try await !deviceCredentials.completeRotation(of: record, digest: digest, how: "the device acknowledged its new credential") {
                logger.notice("a device acknowledged a credential that is no longer pending (revoked, or completed elsewhere)", metadata: [
                    "device": "\(record.name)", "device_id": "\(deviceID)",
                ])
            }
        } catch {
            // The device holds the new credential: its next bind with it completes the rotation.
            logger.error("cannot complete a device's credential rotation; its next bind with the new credential does", metadata: [
                "device_id": "\(deviceID)", "error": "\(Self.oneLine(error))",
            ])
        }
    }

    /// Offers a new credential on every connection here with sessions of the device (a rotation
    /// was asked for here or on another instance); how many were handed one.
    @discardableResult
    package func offerCredential(toDevice deviceID: String) async -> Int {
        var handed = 0
        for id in Set(await hub.bound { $0.subject.deviceID == deviceID }.map(\.key.connection)).sorted() {
            if await hub.connection(id)?.offerCredential(to: deviceID) == true { handed += 1 }
        }
        return handed
    }
}
