import Foundation
import Testing
import TetherAgent
import TetherControl

/// The event log: what it keeps, what a reader following it gets, and that a stalled reader
/// costs nobody else anything.
@Suite struct EventLogTests {
    func state(_ partition: String, _ state: String) -> AgentEvent { AgentEvent(.state, partition: partition, state: state) }

    @Test func keepsTheLastThousandNumbered() {
        let log = EventLog()
        for i in 0..<1500 { log.append(state("p", "s\(i)")) }
        let kept = log.recent()
        #expect(kept.count == EventLog.historyLimit)
        #expect(kept.first?.state == "s500" && kept.last?.state == "s1499")
        #expect(kept.map(\.seq) == Array(501...1500).map(UInt64.init))
    }

    @Test func aPartitionFilterKeepsItsEventsAndTheAgentsOwn() {
        let log = EventLog()
        log.append(state("a", "synced"))
        log.append(state("b", "synced"))
        log.append(AgentEvent(.reload, outcome: "applied"))
        log.append(AgentEvent(.syncError, partition: "", name: "connection_refused", action: "transient"))
        #expect(log.recent(partition: "a").map(\.event) == [.state, .reload, .syncError])
        #expect(log.recent(partition: "a").compactMap(\.partition) == ["a", ""])
    }

    @Test func aFollowerGetsTheBacklogThenNewEvents() {
        let log = EventLog()
        log.append(state("p", "connecting"))
        let (backlog, subscription) = log.follow()
        #expect(backlog.map(\.state) == ["connecting"])
        log.append(state("p", "synced"))
        #expect(subscription?.next(until: Date(timeIntervalSinceNow: 5)) == .event(log.recent().last!))
        #expect(subscription?.next(until: Date(timeIntervalSinceNow: 0.05)) == .timedOut)
    }

    @Test func aStalledReaderMissesEventsAndIsToldHowMany() {
        let log = EventLog()
        let (_, stalled) = log.follow()
        let (_, live) = log.follow()
        let total = EventLog.readerQueueLimit + 300
        for i in 0..<total {
            log.append(state("p", "s\(i)"))
            // The live reader keeps up; the stalled one reads nothing.
            guard case .event(let event) = live!.next(until: Date(timeIntervalSinceNow: 5)) else {
                Issue.record("the live reader did not get event \(i)")
                return
            }
            #expect(event.state == "s\(i)")
        }
        var got: [AgentEvent] = []
        while case .event(let event) = stalled!.next(until: Date(timeIntervalSinceNow: 0.05)) { got.append(event) }
        #expect(got.count == EventLog.readerQueueLimit + 1)
        #expect(got.prefix(EventLog.readerQueueLimit).map(\.state) == (0..<EventLog.readerQueueLimit).map { "s\($0)" })
        #expect(got.last?.event == .dropped)
        #expect(got.last?.skipped == 300)
        // After catching up it gets every new event again.
        log.append(state("p", "after"))
        #expect(stalled!.next(until: Date(timeIntervalSinceNow: 5)) == .event(log.recent().last!))
    }

    @Test func theDroppedNoteComesBeforeTheNextEventItWasMissing() {
        let log = EventLog()
        let (_, reader) = log.follow()
        for i in 0..<(EventLog.readerQueueLimit + 2) { log.append(state("p", "s\(i)")) }
        // Read one: room for the note and the next event.
        _ = reader!.next(until: Date(timeIntervalSinceNow: 1))
        log.append(state("p", "new"))
        var tail: [AgentEvent] = []
        while case .event(let event) = reader!.next(until: Date(timeIntervalSinceNow: 0.05)) { tail.append(event) }
        #expect(tail.suffix(2).map(\.event) == [.dropped, .state])
        #expect(tail.suffix(2).first?.skipped == 2)
        #expect(tail.last?.state == "new")
    }

    @Test func closingEndsEveryFollower() {
        let log = EventLog()
        let (_, reader) = log.follow()
        log.append(state("p", "x"))
        log.close()
        #expect(reader?.next(until: Date(timeIntervalSinceNow: 1)) == .event(log.recent().last!), "what was queued is still read")
        #expect(reader?.next(until: Date(timeIntervalSinceNow: 1)) == .ended)
        #expect(log.follow().subscription == nil)
    }

    @Test func eventsEncodeAsOneLineWithSnakeCaseKeys() throws {
        var event = AgentEvent(
            .hook, at: Date(timeIntervalSince1970: 1_795_000_000.25), partition: "p", resetID: "r1", outcome: "failed", hook: "before-reset",
            exitStatus: 3)
        event.seq = 7
        #expect(event.jsonLine == #"{"at":"2026-11-18T11:06:40.250Z","event":"hook","exit_status":3,"hook":"before-reset","outcome":"failed","partition":"p","reset_id":"r1","seq":7}"#)
        #expect(AgentEvent(event.jsonValue) == event)
        #expect(event.humanLine == "2026-11-18T11:06:40.250Z hook p hook=before-reset exit_status=3 outcome=failed reset=r1")
    }
}
