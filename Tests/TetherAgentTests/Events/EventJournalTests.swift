import Foundation
import Synchronization
import Testing
import TetherAgent
import TetherControl
import TetherTestSupport

/// The event journal: numbers and kept events outlive the log (a restart), a reader resumes
/// after the last event it handled and hears what it can no longer get, and a journal that
/// cannot be written costs the agent nothing but the journal.
@Suite struct EventJournalTests {
    func state(_ partition: String, _ state: String) -> AgentEvent { AgentEvent(.state, partition: partition, state: state) }

    @Test func numbersAndKeptEventsGoOnAfterARestart() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.sqlite"
        do {
            let log = EventLog(journal: try EventJournal(path: path))
            for i in 0..<5 { log.append(state("p", "s\(i)")) }
            #expect(log.lastSeq == 5)
        }
        let again = EventLog(journal: try EventJournal(path: path))
        #expect(again.lastSeq == 5)
        #expect(again.recent().map(\.state) == ["s0", "s1", "s2", "s3", "s4"])
        let next = again.append(state("p", "after"))
        #expect(next.seq == 6)
        // A reader that handled event 3 before the restart gets 4, 5 and 6.
        #expect(again.recent(after: 3).map(\.seq) == [4, 5, 6])
        #expect(again.recent(after: 6).isEmpty)
    }

    @Test func theJournalKeepsTheLastThousand() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.sqlite"
        do {
            let log = EventLog(journal: try EventJournal(path: path))
            for i in 0..<1_250 { log.append(state("p", "s\(i)")) }
        }
        let (kept, last) = try EventJournal(path: path).load(limit: EventLog.historyLimit)
        #expect(last == 1_250)
        #expect(kept.count == EventLog.historyLimit && kept.first?.seq == 251)
    }

    @Test func aReaderFurtherBackThanTheKeptEventsHearsHowManyItMissed() {
        let log = EventLog()
        for i in 0..<1_100 { log.append(state("p", "s\(i)")) }
        let resumed = log.recent(after: 40)
        #expect(resumed.first?.event == .dropped)
        #expect(resumed.first?.skipped == 60, "events 41 to 100 are no longer kept")
        #expect(resumed.dropFirst().first?.seq == 101 && resumed.count == 1 + EventLog.historyLimit)
        // Following from there: the same backlog, then new events.
        let (backlog, subscription) = log.follow(after: 1_099)
        #expect(backlog.map(\.seq) == [1_100])
        log.append(state("p", "new"))
        #expect(subscription?.next(until: Date(timeIntervalSinceNow: 5)) == .event(log.recent().last!))
    }

    @Test func aNumberTheLogNeverGaveMeansTheJournalWasLost() {
        let log = EventLog()
        log.append(state("p", "one"))
        let resumed = log.recent(after: 500)
        #expect(resumed.first?.event == .dropped && resumed.first?.skipped == nil)
        #expect(resumed.dropFirst().map(\.state) == ["one"])
    }

    @Test func aJournalThatCannotBeWrittenIsToldOnceAndEventsGoOn() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.sqlite"
        let problems = Problems()
        let log = EventLog(journal: try EventJournal(path: path)) { problem in problems.list.withLock { $0.append(problem) } }
        log.append(state("p", "written"))
        // From now on every write of the journal fails, as on a full disk.
        let refuse = try await ChildProcess.run(
            "/usr/bin/sqlite3", [path, "CREATE TRIGGER refuse BEFORE INSERT ON event BEGIN SELECT RAISE(ABORT, 'disk full'); END;"])
        #expect(refuse.status == 0, "\(refuse)")
        for i in 0..<3 { log.append(state("p", "s\(i)")) }
        #expect(log.lastSeq == 4 && log.recent().count == 4, "events go on in memory")
        #expect(problems.list.withLock { $0.count } == 1, "told once, not per event")
        #expect(problems.list.withLock { $0.first?.contains("cannot write the event journal") } == true)
        // Once it can be written again, events are kept there again.
        let allow = try await ChildProcess.run("/usr/bin/sqlite3", [path, "DROP TRIGGER refuse;"])
        #expect(allow.status == 0)
        log.append(state("p", "again"))
        #expect(try EventJournal(path: path).load(limit: 10).events.map(\.state) == ["written", "again"])
    }

    @Test func aSymbolicLinkIsRefused() throws {
        let directory = try TemporaryDirectory()
        let target = directory.path + "/elsewhere.sqlite"
        _ = FileManager.default.createFile(atPath: target, contents: nil)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/events.sqlite", withDestinationPath: target)
        #expect(throws: (any Error).self) { try EventJournal(path: directory.path + "/events.sqlite") }
    }
}

private final class Problems: Sendable {
    let list = Mutex<[String]>([])
}
