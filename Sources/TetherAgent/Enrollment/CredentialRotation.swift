import Crypto
import Logging
import TetherProtocol

/// The agent's side of credential rotation (protocol 7; docs/operations.md "Rotating a
/// device's credential"): a credential the server hands over is written to `[server]
/// token_file` atomically (``CredentialWriter``) before the server is told, so a crash at any
/// instant leaves a token file the server accepts — the old credential until the server hears
/// of the new one, the new one after (a bind with it completes the rotation).
enum CredentialRotation {
    /// What became of a credential the server handed over.
    enum Outcome: Sendable, Hashable {
        /// Written: acknowledge this digest (SHA-256 of the secret).
        case written(digest: [UInt8])
        /// Not written (logged): the server keeps both credentials and hands it again later.
        case notWritten
    }

    /// Writes `credential` to `tokenFile` when the file holds a credential of the same device.
    static func store(_ credential: DeviceCredential, tokenFile: String, log: Logger) async -> Outcome {
        await FaultInjection.rotateGate("received")
        switch TokenFile.inspect(tokenFile) {
        case .credential(let deviceID) where deviceID == credential.deviceID:
            break
        case .credential(let deviceID):
            log.error(
                "the server handed over a credential for another device; it is not written",
                metadata: ["device_id": "\(deviceID)", "credential_device_id": "\(credential.deviceID)"])
            return .notWritten
        default:
            log.error(
                "the server handed over a device credential, but token_file holds none to replace; it is not written",
                metadata: ["token_file": "\(tokenFile)"])
            return .notWritten
        }
        do {
            // The credential it replaces is kept: a server put back from a backup taken before
            // this rotation knows the device by it (``CredentialFallback``).
            try CredentialHistory.remember(currentOf: tokenFile, deviceID: credential.deviceID)
        } catch {
            log.warning(
                "cannot keep the credential being replaced beside token_file: \(error); a server whose database is put back from a backup taken before this rotation will refuse this device",
                metadata: ["token_file": "\(tokenFile)"])
        }
        do {
            try CredentialWriter.write(credential.text, to: tokenFile)
        } catch {
            log.error(
                "cannot write the new credential the server handed over; the current one keeps working and the server hands it again",
                metadata: [
                    "token_file": "\(tokenFile)", "error": "\(error)",
                    "hint": "token_file's directory must be writable by the agent (the unit's StateDirectory, /var/lib/tether)",
                ])
            return .notWritten
        }
        log.notice("device credential rotated: the new one is written to token_file", metadata: ["token_file": "\(tokenFile)"])
        await FaultInjection.rotateGate("written")
        return .written(digest: Array(SHA256.hash(data: Array(credential.secret.utf8))))
    }
}
