import Foundation
import Testing
import TetherControl
import TetherProtocol
@testable import TetherAgent

/// From a remote action to the control request `tetherctl` would send, and from the control
/// handler's answer to what the server is told (issue 49).
@Suite struct RemoteActionDecisionTests {
    private static let all = RemoteActionKind.all

    private func decide(_ kind: RemoteActionKind, _ partition: String? = nil, accepted: [RemoteActionKind] = all) -> RemoteActionDecision {
        RemoteActionDecision.decide(RemoteAction(id: 7, kind: kind, partition: partition), accepted: accepted)
    }

    private func request(_ command: ControlRequest.Command, _ partition: String? = nil) -> RemoteActionDecision {
        .run(ControlRequest(command: command, partition: partition, protocol: ControlProtocol.version))
    }

    @Test func eachKnownKindRunsTheControlCommandOfTheSameMeaning() {
        #expect(decide(.initiateReset, "store-1") == request(.resetInitiate, "store-1"))
        #expect(decide(.pause, "store-1") == request(.pause, "store-1"))
        #expect(decide(.resume, "store-1") == request(.resume, "store-1"))
        #expect(decide(.retryNow) == request(.retryNow))
        #expect(decide(.retryNow, "store-1") == request(.retryNow, "store-1"))
        #expect(decide(.diagnostics) == request(.diagnostics))
    }

    @Test func aKindNotInRemoteActionsIsRefusedNamingTheKey() {
        #expect(decide(.pause, "store-1", accepted: RemoteActionKind.acceptedByDefault)
            == .refuse("this device does not accept remote pause ([device] remote_actions)"))
        for kind in Self.all {
            guard case .refuse(let message) = decide(kind, "store-1", accepted: []) else {
                Issue.record("\(kind) ran with remote_actions = []")
                continue
            }
            #expect(message.contains("[device] remote_actions"))
        }
    }

    @Test func anUnknownKindIsRefusedEvenWhenListed() {
        let reboot = RemoteActionKind(rawValue: "reboot")
        guard case .refuse(let message) = decide(reboot, accepted: Self.all + [reboot]) else {
            Issue.record("an unknown kind ran")
            return
        }
        #expect(message.hasPrefix(#"unknown action "reboot""#))
    }

    @Test func aPartitionIsNeededWhereTheCommandNeedsOneAndMustBeLegal() {
        #expect(decide(.initiateReset) == .refuse("initiate-reset needs a partition"))
        #expect(decide(.pause) == .refuse("pause needs a partition"))
        #expect(decide(.resume) == .refuse("resume needs a partition"))
        #expect(decide(.resume, "../etc") == .refuse(#"illegal partition name "../etc""#))
        #expect(decide(.retryNow, "a b") == .refuse(#"illegal partition name "a b""#))
        #expect(decide(.diagnostics, "store-1") == .refuse("diagnostics concerns the whole agent and takes no partition"))
    }

    // MARK: The answer

    private func result(_ kind: RemoteActionKind, _ response: ControlResponse, partition: String? = "store-1") -> RemoteActionResult {
        RemoteActionDecision.result(for: RemoteAction(id: 9, kind: kind, partition: partition), response: response)
    }

    @Test func aSuccessIsDoneWithAShortMessageFromTheResult() {
        let reset = result(.initiateReset, .success(report: ResetInitiatedReport(id: "00000000000000a7", partition: "store-1", outcome: "initiated")))
        #expect(reset == RemoteActionResult(id: 9, outcome: .done, message: "reset 00000000000000a7 of store-1 initiated"))
        let forced = result(.initiateReset, .success(report: ResetInitiatedReport(id: "b", partition: "store-1", outcome: "in-progress")))
        #expect(forced.message == "reset b of store-1 initiated: in-progress")
        #expect(result(.pause, .success(report: PartitionStateReport(partition: "store-1", state: "paused"))).message == "store-1 paused (state paused)")
        #expect(result(.resume, .success(report: PartitionStateReport(partition: "store-1", state: "connecting"))).message
            == "store-1 resumed (state connecting)")
        let retry = result(.retryNow, .success(report: RetryNowReport(connection: true, partitions: ["a", "b"])), partition: nil)
        #expect(retry == RemoteActionResult(id: 9, outcome: .done, message: "reconnecting now; binding again: a, b"))
        #expect(result(.retryNow, .success(report: RetryNowReport(connection: false, partitions: [])), partition: nil).message
            == "the connection was not backing off; binding again: none")
        #expect(result(.pause, .success(.null)).outcome == .done, "an unreadable result is still a success")
    }

    @Test func whatTheDeviceRefusesIsRefusedTheRestFailed() {
        let unknown = result(.pause, .failure("no partition named nope is configured", code: .unknownPartition), partition: "nope")
        #expect(unknown == RemoteActionResult(id: 9, outcome: .refused, message: "no partition named nope is configured"))
        #expect(result(.pause, .failure("illegal partition name", exitCode: 2)).outcome == .refused)
        #expect(result(.initiateReset, .failure("no reset to initiate for store-1")).outcome == .refused)
        #expect(result(.initiateReset, .failure("nothing to initiate: store-1 is synced with no pending reset and no error to recover from")).outcome
            == .refused)
        let failed = result(.initiateReset, .failure("reset of store-1 could not start: disk full\nsecond line"))
        #expect(failed == RemoteActionResult(id: 9, outcome: .failed, message: "reset of store-1 could not start: disk full second line"))
        #expect(result(.pause, .failure("cannot pause store-1: readonly")).outcome == .failed)
        #expect(result(.diagnostics, .failure("the daemon is stopping", code: .unavailable), partition: nil).outcome == .failed)
    }

    @Test func aDiagnosticsReportTravelsAsItsJSON() throws {
        let report = DiagnosticsReport(
            release: "0.1.0", startedAt: "2026-11-29T12:00:00.000Z", uptimeSeconds: 60,
            status: StatusReport(connection: nil, partitions: []), configuration: ["state_dir": "/var/lib/tether"], events: [])
        let value = try JSONValue(encoding: report)
        let answer = result(.diagnostics, .success(value), partition: nil)
        #expect(answer.outcome == .done)
        #expect(answer.report == DiagnosticsBounds.bytes(value))
        #expect(answer.message == "diagnostics report of \(answer.report.count) bytes (0 events)")
        let decoded = try JSONValue(encoding: try JSONDecoderBox.decode(answer.report))
        #expect(decoded == value)
    }

    @Test func aDiagnosticsReportOverTheLimitFails() {
        let huge = JSONValue.string(String(repeating: "x", count: ProtocolLimits.maxActionReportBytes))
        let answer = result(.diagnostics, .success(huge), partition: nil)
        #expect(answer.outcome == .failed)
        #expect(answer.report.isEmpty)
    }
}

/// Reads a report's bytes back as JSON.
private enum JSONDecoderBox {
    static func decode(_ bytes: [UInt8]) throws -> JSONValue {
        try Foundation.JSONDecoder().decode(JSONValue.self, from: Foundation.Data(bytes))
    }
}
