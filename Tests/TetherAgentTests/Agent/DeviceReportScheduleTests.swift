import Testing
import TetherProtocol
@testable import TetherAgent

/// When the agent reports to the server's device ledger (``DeviceReportSchedule``).
@Suite struct DeviceReportScheduleTests {
    typealias Fingerprint = PartitionStatus.LedgerFingerprint

    static func figures(_ state: String, unsynced: Int = 0) -> Fingerprint {
        Fingerprint(
            state: state, serverVersion: 1, clientFile: 1, unsyncedChanges: unsynced, unsyncedSince: nil, lastUploadAt: nil,
            lastErrorCode: nil, lastErrorAt: nil, pendingReset: nil, pendingResetReason: nil)
    }

    @Test func everythingFirstThenChangesAtMostOncePerIntervalAndEverythingAtTheHeartbeat() {
        var schedule = DeviceReportSchedule(interval: .seconds(10), heartbeat: .seconds(600))
        let start = ContinuousClock.now
        var current = ["a": Self.figures("synced"), "b": Self.figures("syncing")]
        #expect(schedule.decide(current, at: start) == .send(["a", "b"]))
        schedule.didSend(current, of: current, at: start)
        // Nothing changed: wait for the heartbeat.
        #expect(schedule.decide(current, at: start + .seconds(1)) == .wait(until: start + .seconds(600), orChange: true))
        // A change within the interval waits for its end, then only the changed partition goes.
        current["b"] = Self.figures("synced")
        #expect(schedule.decide(current, at: start + .seconds(3)) == .wait(until: start + .seconds(10), orChange: false))
        #expect(schedule.decide(current, at: start + .seconds(10)) == .send(["b"]))
        schedule.didSend(["b": current["b"]!], of: current, at: start + .seconds(10))
        #expect(schedule.decide(current, at: start + .seconds(11)) == .wait(until: start + .seconds(600), orChange: true))
        // The heartbeat sends everything, and counts as the last full report.
        #expect(schedule.decide(current, at: start + .seconds(600)) == .send(["a", "b"]))
        schedule.didSend(current, of: current, at: start + .seconds(600))
        #expect(schedule.decide(current, at: start + .seconds(601)) == .wait(until: start + .seconds(1200), orChange: true))
        // A partition added by a reload is a change.
        current["c"] = Self.figures("connecting")
        #expect(schedule.decide(current, at: start + .seconds(700)) == .send(["c"]))
    }

    @Test func theOldestUnsyncedChangeIsTrackedFromTheCount() {
        var status = PartitionStatus(name: .init("p")!, state: .syncing)
        status.unsyncedChanges = 2
        status.noteUnsyncedChange(from: 0, at: 100)
        #expect(status.unsyncedSince == 100 && status.lastUploadAt == nil)
        status.unsyncedChanges = 5
        status.noteUnsyncedChange(from: 2, at: 150)
        #expect(status.unsyncedSince == 100, "more changes: the oldest is as old")
        status.unsyncedChanges = 1
        status.noteUnsyncedChange(from: 5, at: 200)
        #expect(status.unsyncedSince == 100 && status.lastUploadAt == 200, "an acknowledgement")
        status.unsyncedChanges = 0
        status.noteUnsyncedChange(from: 1, at: 210)
        #expect(status.unsyncedSince == nil && status.lastUploadAt == 210)
        let entry = status.ledgerEntry(resets: ["recovered": 1], at: 260)
        #expect(entry.unsyncedFor == nil && entry.lastUploadAgo == 50 && entry.resets == ["recovered": 1])
    }
}
