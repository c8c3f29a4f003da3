import Foundation
import Logging
import TetherProtocol

/// The token binds are sent with: `[server] token_file`'s, or, while the server refuses that
/// one (203), an earlier credential of this device (``CredentialFallback``,
/// ``CredentialHistory``): a server whose database was put back from a backup taken before the
/// device's last rotation knows it by one of those, and the one it accepts becomes the token
/// file's again (docs/server.md "A server database put back from an older backup").
extension PartitionRegistry {
    func readToken() async throws -> String {
        let current = try readTokenFile()
        guard credentialFallback.trying != nil else { return current }
        guard current == credentialFallbackBase else {
            // Rotated, enrolled or edited meanwhile: the new credential first.
            credentialFallback.tokenFileChanged()
            return current
        }
        return credentialFallback.offered(current: current, earlier: earlierCredentials(than: current))
    }

    func credentialRefused(_ token: String) async {
        guard let current = try? readTokenFile(), DeviceCredential(parsing: current) != nil else { return }
        if current != credentialFallbackBase { credentialFallback.tokenFileChanged() }
        credentialFallbackBase = current
        let earlier = earlierCredentials(than: current)
        let path = configuration.server.tokenFile
        switch credentialFallback.refused(token, current: current, earlier: earlier) {
        case .none:
            break
        case .offerEarlier(let index, log: true):
            logger.warning(
                "the server refused this device's credential; the next bind offers the one it held before (\(index + 1) of \(earlier.count) kept), as a server whose database was put back from a backup knows it by that",
                metadata: ["token_file": "\(path)", "tether.error_code": "203"])
        case .offerEarlier:
            break
        case .exhausted(let log):
            credentialRefusedEverywhere = current
            let enrolls = configuration.server.enrollmentKeyFile != nil
            if log && enrolls {
                logger.warning(
                    "the server refused this device's credential and every earlier one it keeps (\(earlier.count)); enrolling again with the enrollment key",
                    metadata: ["token_file": "\(path)", "tether.error_code": "203"])
            } else if log {
                logger.error(
                    "the server refused this device's credential and every earlier one it keeps (\(earlier.count)); binds go on with token_file's",
                    metadata: [
                        "token_file": "\(path)", "tether.error_code": "203",
                        "hint": "the device is revoked or removed, or the server does not know this credential (its database put back from before the enrollment, this disk from before a rotation): re-admit it with tetherctl enroll, or set [server] enrollment_key_file so it enrolls by itself",
                    ])
            }
            if enrolls { await connection.reenrollmentDue() }
        }
    }

    func credentialAccepted(_ token: String) async {
        // Every bind ends here: nothing to read unless a refusal came first.
        guard credentialFallback != CredentialFallback() || credentialRefusedEverywhere != nil else { return }
        guard let current = try? readTokenFile() else { return }
        if token == current { credentialRefusedEverywhere = nil }
        guard current == credentialFallbackBase else { return }
        let earlier = earlierCredentials(than: current)
        guard case .restore(let credential) = credentialFallback.accepted(token, current: current, earlier: earlier) else { return }
        credentialRefusedEverywhere = nil
        let path = configuration.server.tokenFile
        do {
            // The refused credential stays the newest earlier one: a database put back again
            // to the newer state knows the device by it.
            try CredentialHistory.write([current] + earlier.filter { $0 != credential }, tokenFile: path)
            try CredentialWriter.write(credential, to: path)
            credentialFallbackBase = credential
            logger.warning(
                "the server accepted the credential this device held before its last rotation and refused the current one: its database was put back from a backup taken before the rotation; that credential is token_file's again",
                metadata: ["token_file": "\(path)"])
        } catch {
            logger.error(
                "the server accepted an earlier credential of this device, but it cannot be written back to token_file: \(error); binds offer it again after each refusal",
                metadata: ["token_file": "\(path)", "hint": "token_file's directory must be writable by the agent (the unit's StateDirectory, /var/lib/tether)"])
        }
    }

    /// Whether the server refused the token file's credential (as it is now) and every earlier
    /// one since the last call: the attempt's credential check enrolls when a key is set.
    /// Taken once, so an enrollment that fails is followed by binds with the token file again.
    func takeCredentialRefusal() -> Bool {
        defer { credentialRefusedEverywhere = nil }
        guard let refused = credentialRefusedEverywhere, let current = try? readTokenFile() else { return false }
        return refused == current
    }

    /// The token file's text (checked as the configuration checks it).
    private func readTokenFile() throws -> String {
        let path = configuration.server.tokenFile
        if let problem = AgentConfiguration.tokenFileProblem(path) { throw AgentError.token(problem) }
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw AgentError.token("\(path) is empty") }
        return text
    }

    /// This device's earlier credentials, newest first, without `current`; none when the
    /// current one is not this device's credential (a user's token, a clone's file).
    private func earlierCredentials(than current: String) -> [String] {
        guard let deviceID = deviceIDForCredentials(), DeviceCredential(parsing: current)?.deviceID == deviceID else { return [] }
        return CredentialHistory.read(tokenFile: configuration.server.tokenFile, deviceID: deviceID, excluding: current)
    }

    private func deviceIDForCredentials() -> String? {
        if let cachedDeviceID { return cachedDeviceID }
        cachedDeviceID = try? stateDatabase.deviceID()
        return cachedDeviceID
    }
}
