import Testing
import TetherControl
import TetherProtocol
import TetherStore

@testable import TetherAgent

/// `changes-applied` events: one per burst of downloads, never holding back the last.
@Suite struct ChangesAppliedCoalescerTests {
    func report(_ tables: [String: Int64], version: Int64) -> ApplyReport {
        var report = ApplyReport()
        report.changesPerTable = tables
        report.changesApplied = Int(tables.values.reduce(0, +))
        report.serverVersion = ServerVersion(version: version, salt: 1)
        return report
    }

    @Test func aBurstIsFewEventsAndItsLastIsNotHeldBack() throws {
        var coalescer = ChangesAppliedCoalescer()
        let start = ContinuousClock.now
        // The first download of a burst is told at once (nothing told before).
        let told = coalescer.add(report(["orders": 500], version: 10), caughtUp: false, now: start, partition: "p")
        let first = try #require(told)
        #expect(first.event == .changesApplied && first.tables == ["orders": 500] && first.rows == 500 && first.serverVersion == 10)
        // The next ones within the second are held and summed.
        for step in 1...9 {
            #expect(coalescer.add(
                report(["orders": 500, "lines": 2], version: 10 + Int64(step)), caughtUp: false, now: start + .milliseconds(step * 50),
                partition: "p") == nil)
        }
        // The last, caught up, carries all of them.
        let caughtUp = coalescer.add(report(["lines": 1], version: 20), caughtUp: true, now: start + .milliseconds(600), partition: "p")
        let last = try #require(caughtUp)
        #expect(last.tables == ["orders": 4_500, "lines": 19] && last.rows == 4_519 && last.serverVersion == 20)
        #expect(coalescer.isEmpty)
    }

    @Test func aSecondAfterTheLastEventTheNextIsToldEvenIfNotCaughtUp() throws {
        var coalescer = ChangesAppliedCoalescer()
        let start = ContinuousClock.now
        _ = coalescer.add(report(["t": 1], version: 1), caughtUp: false, now: start, partition: "p")
        #expect(coalescer.add(report(["t": 1], version: 2), caughtUp: false, now: start + .milliseconds(999), partition: "p") == nil)
        let later = coalescer.add(report(["t": 1], version: 3), caughtUp: false, now: start + .seconds(1), partition: "p")
        let next = try #require(later)
        #expect(next.rows == 2 && next.serverVersion == 3)
    }

    @Test func acknowledgementsAloneAreNoEventAndFlushTellsWhatIsHeld() throws {
        var coalescer = ChangesAppliedCoalescer()
        let start = ContinuousClock.now
        #expect(coalescer.add(report([:], version: 5), caughtUp: true, now: start, partition: "p") == nil)
        _ = coalescer.add(report(["t": 1], version: 6), caughtUp: false, now: start, partition: "p")
        #expect(coalescer.add(report(["t": 2], version: 7), caughtUp: false, now: start + .milliseconds(10), partition: "p") == nil)
        let flushed = coalescer.flush(partition: "p")
        let held = try #require(flushed)
        #expect(held.rows == 2 && held.serverVersion == 7)
        #expect(coalescer.flush(partition: "p") == nil)
    }
}
