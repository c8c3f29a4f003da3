import Foundation
import Testing
import TetherProtocol
import TetherServer
import TetherTestSupport

/// `tether-server admin enroll-key|device|audit|grant` as an operator runs them against a real
/// server: a key printed once and never logged, a device enrolled with it (`POST /enroll`)
/// then tagged, rotated, revoked and removed, each change in the audit trail; bad arguments
/// are usage errors before anything is sent.
@Suite struct EnrollmentAdminCLITests {
    @Test func badArgumentsAreUsageErrors() async throws {
        try await withServer { server in
            for arguments in [
                ["enroll-key", "create", "--uses", "2", "--reusable"], ["enroll-key", "create", "--uses", "0"],
                ["enroll-key", "create", "--tag", "Store=1"], ["enroll-key", "create", "--tag", "store"], ["enroll-key", "create", "--tag", "store="],
                ["enroll-key", "create", "--expires", "soon"], ["enroll-key", "create", "--expires", "0s"], ["enroll-key", "revoke"],
                ["device", "tag", "till-1"], ["device", "tag", "till-1", "Bad=1"], ["device", "rotate"], ["audit", "--limit", "0"],
                ["grant", "tag:Store=1", "shared", "read"], ["grant", "device:till-1", "shared", "read"], ["access"],
            ] {
                let result = try await server.adminCLI(arguments)
                #expect(result.status == 2, "\(arguments): \(result.stderr)")
            }
        }
    }

    @Test func aKeyEnrollsADeviceThatIsThenChangedAndAudited() async throws {
        try await withServer { server in
            let created = try await server.adminCLI(["enroll-key", "create", "--tag", "store=17", "--uses", "2", "--expires", "1d", "--note", "shop 17"])
            #expect(created.status == 0, "\(created.stderr)")
            let text = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let key = try #require(EnrollmentKeyText(parsing: text), "stdout is the key alone: \(created.stdout)")
            #expect(created.stderr.contains("shown this once") && created.stderr.contains("store=17"))
            let list = try await server.adminCLI(["enroll-key", "list"])
            #expect(list.stdout.contains(key.keyID) && list.stdout.contains("0/2") && !list.stdout.contains(key.secret))

            let deviceID = String(repeating: "5a", count: 16)
            let (status, body) = try Self.enroll(server, EnrollmentRequest(key: text, deviceID: deviceID, name: "till-1", release: "test"))
            #expect(status == 201, "\(body)")

            let devices = try await server.adminCLI(["devices"])
            #expect(devices.status == 0)
            let line = try #require(devices.stdout.split(separator: "\n").first { $0.hasPrefix("till-1") })
            #expect(line.contains("enrolled") && line.contains("active") && line.contains("store=17") && line.contains(key.keyID))
            #expect(devices.stdout.split(separator: "\n").contains { $0.hasPrefix("pos-17") && $0.contains("config") })

            #expect(try await server.adminCLI(["device", "tag", "till-1", "lane=a", "store="]).stdout.contains("tags lane=a"))
            #expect(try await server.adminCLI(["device", "rotate", "till-1"]).stdout.contains("rotation pending"))
            #expect(try await server.adminCLI(["device", "revoke", "till-1"]).stdout.contains("revoked"))
            #expect(try await server.adminCLI(["device", "revoke", "till-1"]).status == 1)
            #expect(try await server.adminCLI(["device", "revoke", "pos-17"]).status == 1, "a [[user]] is not an enrolled device")
            #expect(try await server.adminCLI(["device", "remove", "till-1"]).status == 0)
            #expect(try await server.adminCLI(["device", "remove", "till-1"]).status == 1)
            #expect(try await server.adminCLI(["enroll-key", "revoke", key.keyID]).status == 0)
            #expect(try await server.adminCLI(["grant", "tag:store=17", "store-{tag:store}", "readwrite"]).status == 0)
            #expect(try await server.adminCLI(["grant", "device:*", "shared", "read"]).status == 0)

            let audit = try await server.adminCLI(["audit", "--json"])
            let records = try JSONDecoder().decode(AdminAPI.Audit.self, from: Data(audit.stdout.utf8)).records
            for action in ["enroll-key.create", "device.enroll", "device.tag", "device.rotate", "device.revoke", "device.remove", "enroll-key.revoke"] {
                #expect(records.contains { $0.action == action }, "\(action) in \(records.map(\.action))")
            }
            #expect(records.filter { $0.action.hasPrefix("device.") && $0.action != "device.enroll" }.allSatisfy { $0.actor == "admin" })
            #expect(!server.log.contains(key.secret), "the key's secret is never logged")
            #expect(server.log.contains("enrollment key created"))
        }
    }

    /// `POST /enroll` on the devices' listener: the status and the body.
    static func enroll(_ server: ServerProcess, _ request: EnrollmentRequest) throws -> (Int, String) {
        let body = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        let socket = try PlainSocket(port: server.port, timeout: 10)
        _ = socket.send(
            "POST /enroll HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        let answer = socket.receive(until: "\u{0}")
        let status = answer.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, answer.components(separatedBy: "\r\n\r\n").dropFirst().joined())
    }
}
