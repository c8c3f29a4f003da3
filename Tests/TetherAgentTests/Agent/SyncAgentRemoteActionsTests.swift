import Foundation
import Logging
import Testing
import TetherControl
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// A real agent (not connected) answering remote actions through its control handler, and its
/// diagnostics report without secrets (issue 49).
@Suite struct SyncAgentRemoteActionsTests {
    static let tokenSecret = "S3cretTokenValueNeverShown"
    static let keySecret = "S3cretEnrollmentKeyNeverShown"
    static let urlPassword = "hunter2-in-the-url"
    static let urlQuery = "querysecret-in-the-url"

    /// An agent with partition `store-1`, a token and an enrollment key file holding secrets, a
    /// server URL with a password and a query; `device` is the body of `[device]`.
    private final class Fixture {
        let dir: TemporaryDirectory
        let agent: SyncAgent
        var tokenFile: String { dir.appending("token") }

        init(device: String = "") async throws {
            dir = try TemporaryDirectory(prefix: "tether-remote-actions")
            try "tdc1.0123456789abcdef0123456789abcdef.\(SyncAgentRemoteActionsTests.tokenSecret)\n".write(
                toFile: dir.appending("token"), atomically: false, encoding: .utf8)
            try "tek1.\(SyncAgentRemoteActionsTests.keySecret)\n".write(toFile: dir.appending("enroll.key"), atomically: false, encoding: .utf8)
            chmod(dir.appending("token"), 0o600)
            chmod(dir.appending("enroll.key"), 0o600)
            let configuration = try AgentConfiguration.parse(
                text: """
                    state_dir = "\(dir.appending("state"))"
                    control_socket = "\(dir.appending("tetherd.sock"))"
                    [device]
                    name = "till-07"
                    \(device)
                    [server]
                    url = "ws://operator:\(SyncAgentRemoteActionsTests.urlPassword)@127.0.0.1:9/sync?key=\(SyncAgentRemoteActionsTests.urlQuery)"
                    token_file = "\(dir.appending("token"))"
                    enrollment_key_file = "\(dir.appending("enroll.key"))"
                    [[partition]]
                    name = "store-1"
                    store = "\(dir.appending("store-1.sqlite"))"
                    """, file: dir.appending("tetherd.toml"), checkFiles: false)
            agent = try SyncAgent(configuration: configuration, logger: Logger(label: "test"))
            await agent.partitions.startControllers()
        }

        deinit { dir.remove() }

        func answer(_ id: Int64, _ kind: RemoteActionKind, _ partition: String? = nil) async -> RemoteActionResult {
            await agent.answer(RemoteAction(id: id, kind: kind, partition: partition))
        }

        /// Whether the partition's lifecycle is paused (its shown state follows once it runs).
        func isPaused() async -> Bool {
            guard let name = PartitionName("store-1"), let controller = await agent.partitions.controller(named: name) else { return false }
            return await controller.machine.isPaused
        }

        func remoteActionEvents() -> [AgentEvent] { agent.events.log.recent().filter { $0.event == .remoteAction } }
    }

    private static func expectNoSecret(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in [tokenSecret, keySecret, urlPassword, urlQuery] {
            #expect(!text.contains(secret), "\(secret) is in the report", sourceLocation: sourceLocation)
        }
    }

    @Test func diagnosticsHoldStatusEventsAndConfigurationButNoSecret() async throws {
        let fixture = try await Fixture()
        fixture.agent.events.emit(AgentEvent(.reload, message: "a reload", outcome: "applied"))
        let response = await fixture.agent.handle(ControlRequest(command: .diagnostics))
        #expect(response.ok, "\(response)")
        let value = try #require(response.result)
        let text = String(decoding: DiagnosticsBounds.bytes(value), as: UTF8.self)
        Self.expectNoSecret(text)
        let report = try value.decode(as: DiagnosticsReport.self)
        #expect(report.release == TetherVersion.release)
        #expect(report.uptimeSeconds >= 0)
        #expect(report.status.partitions.map(\.name) == ["store-1"])
        #expect(report.status.connection?.serverURL == "ws://127.0.0.1:9/sync")
        #expect(report.events.contains { $0.event == .reload })
        guard case .object(let configuration) = report.configuration, case .object(let server) = configuration["server"] else {
            Issue.record("no [server] in \(report.configuration)")
            return
        }
        #expect(server["url"] == "ws://127.0.0.1:9/sync")
        #expect(server["token_file"] == .string(fixture.tokenFile), "files by path")
        #expect(server["enrollment_key_file"] == .string(fixture.dir.appending("enroll.key")))
        #expect(configuration["device"] == ["name": "till-07", "report_interval_seconds": 10, "remote_actions": ["initiate-reset", "retry-now", "resume", "diagnostics"]])
    }

    @Test func aRemoteDiagnosticsActionSendsTheReport() async throws {
        let fixture = try await Fixture()
        let result = await fixture.answer(1, .diagnostics)
        #expect(result.outcome == .done, "\(result)")
        #expect(!result.report.isEmpty && result.report.count <= ProtocolLimits.maxActionReportBytes)
        Self.expectNoSecret(String(decoding: result.report, as: UTF8.self))
        let report = try JSONDecoder().decode(DiagnosticsReport.self, from: Data(result.report))
        #expect(report.status.partitions.count == 1)
    }

    @Test func actionsRunUnderTheDevicesRules() async throws {
        let fixture = try await Fixture()
        let pause = await fixture.answer(2, .pause, "store-1")
        #expect(pause == RemoteActionResult(id: 2, outcome: .refused, message: "this device does not accept remote pause ([device] remote_actions)"))
        #expect(!(await fixture.isPaused()))
        let unknown = await fixture.answer(3, .resume, "nope")
        #expect(unknown.outcome == .refused && unknown.message == "no partition named nope is configured")
        let nothing = await fixture.answer(4, .initiateReset, "store-1")
        #expect(nothing.outcome == .refused, "no reset waits: \(nothing)")
        #expect(nothing.message.hasPrefix("nothing to initiate"))
        let resume = await fixture.answer(5, .resume, "store-1")
        #expect(resume.outcome == .done, "\(resume)")
        let strange = await fixture.answer(6, RemoteActionKind(rawValue: "reboot"))
        #expect(strange.outcome == .refused && strange.message.hasPrefix("unknown action"))
        // Each is an event, with the server's id.
        let events = fixture.remoteActionEvents()
        #expect(events.map(\.actionID) == [2, 3, 4, 5, 6])
        #expect(events.map(\.outcome) == ["refused", "refused", "refused", "done", "refused"])
        #expect(events.first?.name == "pause" && events.first?.partition == "store-1")
        #expect(events.last?.partition == nil)
    }

    @Test func aPauseTheDeviceAcceptsPausesThePartition() async throws {
        let fixture = try await Fixture(device: #"remote_actions = ["pause", "resume"]"#)
        let pause = await fixture.answer(7, .pause, "store-1")
        #expect(pause == RemoteActionResult(id: 7, outcome: .done, message: "store-1 paused (state paused)"))
        #expect(await fixture.isPaused())
        let diagnostics = await fixture.answer(8, .diagnostics)
        #expect(diagnostics.outcome == .refused, "not listed")
    }

    @Test func anActionSentAgainIsAnsweredAsBeforeWithoutRunningTwice() async throws {
        let fixture = try await Fixture(device: #"remote_actions = ["pause", "resume"]"#)
        let first = await fixture.answer(11, .pause, "store-1")
        #expect(first.outcome == .done)
        _ = await fixture.answer(12, .resume, "store-1")
        #expect(!(await fixture.isPaused()))
        // The server sends 11 again (its answer was lost with the connection): not paused again.
        let again = await fixture.answer(11, .pause, "store-1")
        #expect(again == first)
        #expect(!(await fixture.isPaused()))
        #expect(fixture.remoteActionEvents().map(\.actionID) == [11, 12], "one event per action run")
    }
}
