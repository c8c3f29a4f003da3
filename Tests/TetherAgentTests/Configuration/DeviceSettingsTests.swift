import Foundation
import Testing
import TetherProtocol
import TetherTOML
import TetherTestSupport
@testable import TetherAgent

/// `[device]`, and in it `remote_actions` (issue 49): which remote actions the device accepts.
@Suite struct DeviceSettingsTests {
    /// A configuration whose `[device]` holds `keys` (line 1 is `[device]`, the keys from line 2).
    private static func parse(_ keys: String) throws(ConfigError) -> AgentConfiguration {
        try AgentConfiguration.parse(
            text: """
                [device]
                \(keys)
                [server]
                url = "ws://127.0.0.1:7800/sync"
                token_file = "/nonexistent/token"
                [[partition]]
                name = "a"
                """, file: "tetherd.toml", checkFiles: false)
    }

    private static func problems(_ keys: String) -> [String] {
        do {
            _ = try parse(keys)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func byDefaultEveryActionButPauseIsAccepted() throws {
        let device = try Self.parse("").device
        #expect(device.remoteActions == [.initiateReset, .retryNow, .resume, .diagnostics])
        #expect(device.remoteActions == RemoteActionKind.acceptedByDefault)
        #expect(!device.remoteActions.contains(.pause))
    }

    @Test func theListIsTakenInTheDocumentationsOrderEachOnce() throws {
        let device = try Self.parse(#"remote_actions = ["diagnostics", "pause", "diagnostics", "initiate-reset"]"#).device
        #expect(device.remoteActions == [.initiateReset, .pause, .diagnostics])
        #expect(try Self.parse(#"remote_actions = ["initiate-reset", "retry-now", "pause", "resume", "diagnostics"]"#).device.remoteActions == RemoteActionKind.all)
    }

    @Test func anEmptyListAcceptsNone() throws {
        #expect(try Self.parse("remote_actions = []").device.remoteActions.isEmpty)
    }

    @Test func anUnknownNameIsAProblemNamingKeyIndexAndLine() {
        let found = Self.problems(#"remote_actions = ["diagnostics", "reboot"]"#)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix(#"tetherd.toml:2: device.remote_actions[1]: "reboot" is not a remote action"#) == true, "\(found)")
        #expect(found.first?.contains(#""initiate-reset", "retry-now", "pause", "resume", "diagnostics""#) == true)
        // A name's case matters, as every name's in the file.
        #expect(Self.problems(#"remote_actions = ["Pause"]"#).first?.contains("device.remote_actions[0]") == true)
    }

    @Test func notAListOfStringsIsAProblem() {
        #expect(Self.problems(#"remote_actions = "pause""#).first?.contains("device.remote_actions: expected an array of strings") == true)
        #expect(Self.problems("remote_actions = [1]").first?.contains("device.remote_actions[0]: expected a string") == true)
    }

    /// `tetherd --check-config` reads the file as `load` does: an unknown name refuses it.
    @Test func loadingAFileWithAnUnknownNameFails() throws {
        let dir = try TemporaryDirectory(prefix: "tether-device-settings")
        defer { dir.remove() }
        let path = dir.appending("tetherd.toml")
        try """
            [server]
            url = "ws://127.0.0.1:7800/sync"
            token_file = "\(dir.appending("token"))"
            [device]
            remote_actions = ["shutdown"]
            [[partition]]
            name = "a"
            """.write(toFile: path, atomically: false, encoding: .utf8)
        do {
            _ = try AgentConfiguration.load(path: path, checkFiles: false)
            Issue.record("an unknown remote action was accepted")
        } catch {
            #expect(error.problems.map(\.description) == [
                #"\#(path):5: device.remote_actions[0]: "shutdown" is not a remote action (one of "initiate-reset", "retry-now", "pause", "resume", "diagnostics")"#
            ])
        }
    }
}
