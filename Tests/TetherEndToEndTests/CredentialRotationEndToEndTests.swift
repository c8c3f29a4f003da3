import Foundation
import Testing
import TetherControl
import TetherProtocol
import TetherTestSupport

/// Credential rotation with a real `tetherd` and real servers (issue 48; docs/server.md
/// "Rotation"), on SQLite and on two PostgreSQL instances (the rotation asked for on the
/// instance the device is not connected to): an agent killed between writing the new
/// credential and acknowledging it binds with the new one and that completes the rotation; a
/// rotation of a connected agent completes at once; the old credential is refused afterwards.
/// A server whose database is put back from a backup taken before two rotations knows the
/// device by its first credential: the agent offers its earlier ones and syncs on.
@Suite(.timeLimit(.minutes(6)))
struct CredentialRotationEndToEndTests {
    enum Setup: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgresqlTwoInstances
        var testDescription: String { rawValue }
        var settings: ClusterSettings {
            switch self {
            case .sqlite: ClusterSettings()
            case .postgresqlTwoInstances: ClusterSettings(storage: .postgresql, instances: 2)
            }
        }
    }

    /// The identity `name` as `admin devices --json` lists it through `instance`.
    static func identity(_ cluster: Cluster, _ name: String, instance: Int = 0) async throws -> JSONValue? {
        let text = try await cluster.admin(["devices", "--json"], instance: instance)
        return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))["identities"]?.arrayValue?.first {
            $0["name"]?.stringValue == name
        }
    }

    /// An agent `till` of partition `p` that enrolls itself as `name` with a reusable key
    /// (granted `p` to every device), not started.
    static func enrollingAgent(_ cluster: Cluster, name: String) async throws -> ClusterAgent {
        let key = try await cluster.admin(["enroll-key", "create", "--reusable"])
        try await cluster.admin(["grant", "device:*", "p", "readwrite"])
        let agent = try cluster.agent(
            "till", partitions: ["p"], extra: "[device]\nname = \"\(name)\"",
            server: "enrollment_key_file = \"\(cluster.dir.appending("till/enroll.key"))\"")
        try FileManager.default.removeItem(atPath: agent.dir + "/token")
        try Cluster.write(key + "\n", to: agent.dir + "/enroll.key", mode: 0o600)
        return agent
    }

    static func token(_ agent: ClusterAgent) throws -> String {
        try String(contentsOfFile: agent.dir + "/token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: Setup.allCases)
    func aKillBetweenWritingAndAcknowledgingLosesNeitherCredential(_ setup: Setup) async throws {
        try await withCluster(setup.settings) { cluster in
            let other = setup == .sqlite ? 0 : 1
            let agent = try await Self.enrollingAgent(cluster, name: "till-r")
            let gates = cluster.dir.appending("gates")
            try FileManager.default.createDirectory(atPath: gates, withIntermediateDirectories: true)
            let environment = ["TETHER_FAULT_ROTATE_GATE": gates, "TETHER_MACHINE_ID_FILE": try cluster.dir.write("machine-id", "5a" + String(repeating: "1", count: 30))]

            try await agent.start(environment: environment)
            try await agent.waitSynced("p")
            let first = try Self.token(agent)
            let device = try #require(DeviceCredential(parsing: first)).deviceID
            try await agent.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('before', 'x', 1)")
            try await agent.waitSynced("p")

            // Asked on the other instance; held once written, before the acknowledgement.
            try Cluster.write("", to: gates + "/written")
            try await cluster.admin(["device", "rotate", "till-r"], instance: other)
            try await eventually("the new credential written", timeout: .seconds(60)) {
                FileManager.default.fileExists(atPath: gates + "/written.reached")
            }
            let second = try Self.token(agent)
            #expect(second != first && DeviceCredential(parsing: second)?.deviceID == device, "the same device's new credential")
            #expect(try await Self.identity(cluster, "till-r")?["rotation_pending"] == .bool(true))
            await agent.stop(SIGKILL)
            try FileManager.default.removeItem(atPath: gates + "/written")

            // Started again: it binds with the new credential, which completes the rotation.
            try await agent.start(environment: environment)
            try await agent.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('after-kill', 'y', 2)")
            try await agent.waitSynced("p")
            try await eventually("the rotation completed", timeout: .seconds(30)) {
                try await Self.identity(cluster, "till-r", instance: other)?["rotation_pending"] == .bool(false)
            }
            #expect(try Self.token(agent) == second)
            let audit = try await cluster.admin(["audit"])
            #expect(audit.contains("device.rotate") && audit.contains("device.rotated"), "\(audit)")
            #expect(!agent.log.contains(second) && !agent.log.contains(first), "a credential in the log")

            // Connected and not held: written and acknowledged at once.
            try await cluster.admin(["device", "rotate", "till-r"], instance: other)
            try await eventually("the second rotation completed", timeout: .seconds(60)) {
                try await Self.identity(cluster, "till-r")?["rotation_pending"] == .bool(false) && (try Self.token(agent)) != second
            }
            let third = try Self.token(agent)
            #expect(agent.log.contains("device credential rotated"))
            try await agent.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('after-rotation', 'z', 3)")
            try await agent.waitSynced("p")

            // An old credential is refused (203) on every instance.
            await agent.stop(SIGKILL)
            try Cluster.write(second + "\n", to: agent.dir + "/token", mode: 0o600)
            try await agent.start(environment: environment)
            try await eventually("the old credential refused", timeout: .seconds(60)) {
                try await agent.events("sync-error").contains { $0["code"]?.numberValue == 203 }
            }
            await agent.stop(SIGKILL)
            try Cluster.write(third + "\n", to: agent.dir + "/token", mode: 0o600)
            try await agent.start(environment: environment)
            try await agent.waitSynced("p")
            let rows = try await agent.rows("p")
            #expect(["before", "after-kill", "after-rotation"].allSatisfy { rows.contains($0) }, "\(rows)")
        }
    }

    /// Soak seed 82998787: a rotation, then the server's database put back from a backup taken
    /// before it. The device binds with the credential the backup knows (kept in
    /// `token.earlier`), writes it back to its token file, and its rows written meanwhile
    /// reach the server; no credential in the log.
    @Test func aServerPutBackFromBeforeTwoRotationsKnowsTheDeviceByAnEarlierCredential() async throws {
        try await withCluster { cluster in
            let agent = try await Self.enrollingAgent(cluster, name: "till-b")
            try await agent.start()
            try await agent.waitSynced("p")
            try await agent.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('before', 'x', 1)")
            try await agent.waitSynced("p")
            let enrolled = try Self.token(agent)
            let backup = cluster.dir.appending("backup.sqlite")
            try await cluster.admin(["backup", "--out", backup])

            var held = enrolled
            for round in 1...2 {
                try await cluster.admin(["device", "rotate", "till-b"])
                try await eventually("rotation \(round) completed", timeout: .seconds(60)) {
                    try await Self.identity(cluster, "till-b")?["rotation_pending"] == .bool(false) && (try Self.token(agent)) != held
                }
                held = try Self.token(agent)
            }
            let rotated = held
            try await agent.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('after-rotations', 'y', 2)")
            try await agent.waitSynced("p")

            // The server's database put back from before both rotations; the device writes meanwhile.
            await cluster.stopServer()
            try await agent.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('while-down', 'z', 3)")
            try await HealEndToEndTests.putDatabaseBack(cluster, backup)
            try await agent.waitSynced("p", timeout: 120)
            #expect(try Self.token(agent) == enrolled, "the credential the backup knows is the token file's again")
            let earlier = try String(contentsOfFile: agent.dir + "/token.earlier", encoding: .utf8)
            #expect(earlier.hasPrefix(rotated + "\n"), "the refused one kept first")
            #expect(agent.log.contains("the server accepted the credential this device held before its last rotation"), "\(agent.log.suffix(3000))")
            #expect(![enrolled, rotated].contains { agent.log.contains($0) }, "a credential in the log")
            // What the server holds, through another device.
            let reader = try cluster.agent("reader", partitions: ["p"])
            try await reader.start()
            try await reader.waitSynced("p")
            let rows = try await reader.rows("p")
            #expect(["before", "after-rotations", "while-down"].allSatisfy { rows.contains($0) }, "\(rows)")
        }
    }

    /// A device's disk put back from an image taken before a rotation: its token file holds a
    /// credential the server replaced, and no earlier one the server knows. The agent, refused
    /// with every credential it has, enrolls again with its key (the server knows the device:
    /// 200, a fresh credential) and syncs what it wrote.
    @Test func aDiskPutBackFromBeforeARotationEnrollsAgainByItself() async throws {
        try await withCluster { cluster in
            let agent = try await Self.enrollingAgent(cluster, name: "till-i")
            try await agent.start()
            try await agent.waitSynced("p")
            let imaged = try Self.token(agent)
            try await cluster.admin(["device", "rotate", "till-i"])
            try await eventually("the rotation completed", timeout: .seconds(60)) {
                try await Self.identity(cluster, "till-i")?["rotation_pending"] == .bool(false) && (try Self.token(agent)) != imaged
            }
            await agent.stop(SIGKILL)
            // The image's token file, and no `.earlier` (the image predates it).
            try Cluster.write(imaged + "\n", to: agent.dir + "/token", mode: 0o600)
            try FileManager.default.removeItem(atPath: agent.dir + "/token.earlier")
            try await agent.start()
            try await agent.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('after-image', 'i', 1)")
            try await agent.waitSynced("p", timeout: 120)
            let enrolled = try Self.token(agent)
            #expect(enrolled != imaged && DeviceCredential(parsing: enrolled)?.deviceID == DeviceCredential(parsing: imaged)?.deviceID)
            #expect(agent.log.contains("enrolling again with the enrollment key"), "\(agent.log.suffix(3000))")
            #expect(![imaged, enrolled].contains { agent.log.contains($0) }, "a credential in the log")
            let audit = try await cluster.admin(["audit"])
            #expect(audit.contains("device.reenroll"), "\(audit)")
            let reader = try cluster.agent("reader", partitions: ["p"])
            try await reader.start()
            try await reader.waitSynced("p")
            #expect(try await reader.rows("p").contains("after-image"))
        }
    }
}
