import Foundation
import Synchronization
import TetherControl
import TetherProtocol

/// Enrolled devices (issue 48): agents that hold an enrollment key instead of a token, and
/// what `tether-server admin` says of keys and identities.
extension Cluster {
    /// A new agent (not started) in the directory `name` with no token file: its `[server]`
    /// names `keyFile` as `enrollment_key_file`, so it enrolls at its first start and writes
    /// its credential to `<dir>/token`. The directory may hold files already (a copied image).
    package func enrollingAgent(_ name: String, partitions: [String], keyFile: String, url: String? = nil) throws -> ClusterAgent {
        let agent = try ClusterAgent(
            directory: dir.appending(name), name: name, token: nil, timing: settings.timing,
            config: .init(
                url: url ?? self.url, partitions: partitions, logLevel: settings.agentLogLevel,
                server: "enrollment_key_file = \"\(keyFile)\""))
        agents.withLock { $0.append(agent) }
        return agent
    }

    /// `admin enroll-key create ARGUMENTS`: the key, printed this once.
    package func createEnrollmentKey(_ arguments: [String], instance: Int = 0) async throws -> String {
        let key = try await admin(["enroll-key", "create"] + arguments, instance: instance)
        guard key.hasPrefix("tek1.") else { throw TestSupportError("enroll-key create printed no key: \(key)") }
        return key
    }

    /// The enrolled devices as an instance lists them (`admin devices --json`, `identities`
    /// of source `enrolled`): `name`, `device_id`, `tags`, `state`, ….
    package func enrolledDevices(instance: Int = 0) async throws -> [JSONValue] {
        let text = try await admin(["devices", "--json"], instance: instance)
        let identities = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))["identities"]?.arrayValue ?? []
        return identities.filter { $0["source"]?.stringValue == "enrolled" }
    }

    /// The enrollment keys (`admin enroll-key list --json`), newest first.
    package func enrollmentKeys(instance: Int = 0) async throws -> [JSONValue] {
        let text = try await admin(["enroll-key", "list", "--json"], instance: instance)
        return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))["keys"]?.arrayValue ?? []
    }
}

extension ClusterAgent {
    /// The device id of the credential in the agent's token file (nil: no credential there).
    package var enrolledDeviceID: String? {
        // Missing or unreadable: no credential.
        guard let text = try? String(contentsOfFile: dir + "/token", encoding: .utf8) else { return nil }
        return DeviceCredential(parsing: text)?.deviceID
    }

    /// Writes an enrollment key to `enroll.key` in the agent's directory, mode 0600; its path.
    @discardableResult
    package func installEnrollmentKey(_ key: String) throws -> String {
        let path = dir + "/enroll.key"
        try Cluster.write(key + "\n", to: path, mode: 0o600)
        return path
    }
}
