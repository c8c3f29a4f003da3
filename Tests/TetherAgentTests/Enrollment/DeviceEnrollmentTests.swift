import Foundation
import Testing
import TetherProtocol
import TetherSyncClient
import TetherTestSupport
@testable import TetherAgent

/// ``DeviceEnrollment`` against the fake `/enroll`: the credential lands in the token file
/// whole, a refusal or a bad key leaves the token file as it was, and enrolling again gives
/// the same device.
@Suite struct DeviceEnrollmentTests {
    static let device = String(repeating: "e5", count: 16)

    static func enrollment(_ server: FakeEnrollmentServer, _ dir: TemporaryDirectory, name: String? = nil) -> DeviceEnrollment {
        DeviceEnrollment(
            serverURL: server.syncURL, trust: ServerTrust(), keyFile: dir.appending("enroll.key"), tokenFile: dir.appending("token"),
            deviceID: device, name: name)
    }

    static func installKey(_ key: String, _ dir: TemporaryDirectory, mode: mode_t = 0o600) throws {
        let path = try dir.write("enroll.key", key + "\n")
        chmod(path, mode)
    }

    @Test func theCredentialIsWrittenAndTheDeviceIsTheSameWhenItEnrollsAgain() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let dir = try TemporaryDirectory()
        try Self.installKey(server.addKey(tags: ["store": "17"], uses: 1), dir)
        let first = try await Self.enrollment(server, dir, name: "till-17").run()
        #expect(first.name == "till-17" && first.tags == ["store": "17"])
        #expect(TokenFile.inspect(dir.appending("token")) == .credential(deviceID: Self.device))
        #expect(try String(contentsOfFile: dir.appending("token"), encoding: .utf8) == first.credential + "\n")
        // A crash after the answer, before the write: the one use is not spent again.
        let again = try await Self.enrollment(server, dir, name: "till-17").run()
        #expect(again.deviceID == first.deviceID && again.name == first.name && again.credential != first.credential)
        #expect(try String(contentsOfFile: dir.appending("token"), encoding: .utf8) == again.credential + "\n")
        #expect(server.devices.count == 1 && server.devices[Self.device]?.enrollments == 2)
        #expect(server.requests.map(\.name) == ["till-17", "till-17"] && server.requests.allSatisfy { $0.release == TetherVersion.release })
    }

    @Test func aRefusalLeavesTheTokenFileAsItWas() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let dir = try TemporaryDirectory()
        try Self.installKey(server.addKey(state: .expired), dir)
        do {
            _ = try await Self.enrollment(server, dir).run()
            Issue.record("enrolled with an expired key")
        } catch {
            #expect(error.code == "expired_key" && !error.isTransient && error.hint == EnrollmentErrorCode.expiredKey.hint, "\(error)")
        }
        #expect(TokenFile.inspect(dir.appending("token")) == .missing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["enroll.key"])
    }

    @Test func aLooseOrGarbageKeyIsRefusedBeforeAnyRequest() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let dir = try TemporaryDirectory()
        try Self.installKey(server.addKey(), dir, mode: 0o644)
        do {
            _ = try await Self.enrollment(server, dir).run()
            Issue.record("enrolled with a key others may read")
        } catch {
            #expect(error.code == "key_file" && !error.isTransient && error.message.contains("mode 644"))
        }
        try Self.installKey("garbage", dir)
        do {
            _ = try await Self.enrollment(server, dir).run()
            Issue.record("enrolled with garbage")
        } catch {
            #expect(error.code == "key_file" && error.message.contains("does not hold an enrollment key"))
        }
        #expect(server.requestCount == 0)
        #expect(TokenFile.inspect(dir.appending("token")) == .missing)
    }

    @Test func theAgentAsksForItsConfiguredNameOnly() throws {
        var device = DeviceSettings(name: "host-1")
        let server = ServerSettings(url: "ws://h/sync", tokenFile: "/t", enrollmentKeyFile: "/k")
        #expect(DeviceEnrollment(server: server, keyFile: "/k", device: device, deviceID: Self.device).name == nil, "clones share a host name")
        device.configuredName = "till-9"
        #expect(DeviceEnrollment(server: server, keyFile: "/k", device: device, deviceID: Self.device).name == "till-9")
        device.configuredName = "Till 9 (front)"
        #expect(DeviceEnrollment(server: server, keyFile: "/k", device: device, deviceID: Self.device).name == nil, "not a device name: the server picks one")
    }
}
