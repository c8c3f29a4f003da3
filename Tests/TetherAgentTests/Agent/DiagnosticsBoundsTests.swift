import Foundation
import Testing
import TetherControl
import TetherProtocol
@testable import TetherAgent

/// A diagnostics report within what a remote action carries: the oldest events go first
/// (issue 49).
@Suite struct DiagnosticsBoundsTests {
    private func report(events count: Int, messageBytes: Int = 100, partitions: Int = 1) -> DiagnosticsReport {
        let events = (0..<count).map { index in
            var event = AgentEvent(.state, partition: "p", state: "synced", message: String(repeating: "m", count: messageBytes))
            event.seq = UInt64(index + 1)
            return event
        }
        let rows = (0..<partitions).map { PartitionReport(name: "p\($0)", state: "synced", serverVersion: 1, unsyncedChanges: 0) }
        return DiagnosticsReport(
            release: "0.1.0", startedAt: "2026-11-29T12:00:00.000Z", uptimeSeconds: 5,
            status: StatusReport(connection: nil, partitions: rows), configuration: ["state_dir": "/var/lib/tether"], events: events)
    }

    private func decoded(_ value: JSONValue?) throws -> DiagnosticsReport {
        try #require(value).decode(as: DiagnosticsReport.self)
    }

    @Test func aSmallReportIsKeptWhole() throws {
        let fitted = try decoded(DiagnosticsBounds.fitted(report(events: 10)))
        #expect(fitted.events.count == 10)
        #expect(fitted.eventsOmitted == 0)
        #expect(fitted.note == nil)
    }

    @Test func atMost200EventsTheLast() throws {
        let fitted = try decoded(DiagnosticsBounds.fitted(report(events: 250)))
        #expect(fitted.events.count == 200)
        #expect(fitted.events.first?.seq == 51 && fitted.events.last?.seq == 250)
    }

    @Test func theOldestEventsAreLeftOutUntilItFitsAndTheReportSaysSo() throws {
        let limit = 20_000
        let whole = DiagnosticsBounds.bytes(try JSONValue(encoding: report(events: 200)))
        #expect(whole.count > limit)
        let value = try #require(DiagnosticsBounds.fitted(report(events: 200), limit: limit))
        #expect(DiagnosticsBounds.bytes(value).count <= limit)
        let fitted = try decoded(value)
        #expect(fitted.events.count > 0 && fitted.events.count < 200)
        #expect(fitted.events.last?.seq == 200, "the newest are kept")
        #expect(fitted.eventsOmitted == 200 - fitted.events.count)
        #expect(fitted.note == "the \(fitted.eventsOmitted) oldest of the last 200 events were left out to keep the report within \(limit) bytes")
        // The fewest left out: one more event would not fit.
        var bigger = report(events: 200)
        bigger.events = Array(bigger.events.suffix(fitted.events.count + 1))
        bigger.eventsOmitted = fitted.eventsOmitted - 1
        bigger.note = "the \(fitted.eventsOmitted - 1) oldest of the last 200 events were left out to keep the report within \(limit) bytes"
        #expect(DiagnosticsBounds.bytes(try JSONValue(encoding: bigger)).count > limit)
    }

    @Test func aReportTooLargeWithoutEventsIsNil() {
        #expect(DiagnosticsBounds.fitted(report(events: 5, partitions: 500), limit: 2_000) == nil)
    }

    @Test func theDefaultLimitIsTheProtocols() throws {
        let value = try #require(DiagnosticsBounds.fitted(report(events: 200, messageBytes: 4_000)))
        #expect(DiagnosticsBounds.bytes(value).count <= ProtocolLimits.maxActionReportBytes)
        #expect(try decoded(value).events.count < 200)
    }
}
