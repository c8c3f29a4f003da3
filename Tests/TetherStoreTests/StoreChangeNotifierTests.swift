import Foundation
import Glibc
import GRDB
import Synchronization
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherStore

/// Collects the notices a consumer task receives.
final class NoticeRecorder: Sendable {
    private let notices = Mutex<[ContinuousClock.Instant]>([])
    var count: Int { notices.withLock { $0.count } }
    var last: ContinuousClock.Instant? { notices.withLock { $0.last } }
    func record(_ notice: StoreCommit) { notices.withLock { $0.append(notice.noticedAt) } }
}

/// CPU time used so far by the thread owning `clock`.
func cpuTime(_ clock: clockid_t) -> Duration {
    var time = timespec()
    clock_gettime(clock, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
}

@Suite struct StoreChangeNotifierTests {
    @Test func noticesCommitsOfAnotherProcessPromptly() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let notifier = try StoreChangeNotifier(path: store.path)
        let recorder = NoticeRecorder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in notifier { recorder.record(notice) } }
            var latencies: [Duration] = []
            for round in 1...3 {
                let before = recorder.count
                let result = try await sqlite3(store.path, "INSERT INTO items VALUES (\(round), 'x', NULL)")
                let exited = ContinuousClock.now
                #expect(result.status == 0)
                try await eventually("commit \(round) noticed", timeout: .seconds(30)) { recorder.count > before }
                if let noticed = recorder.last { latencies.append(noticed - exited) }
            }
            // The commit happens before the process exits, so the notice may even come first.
            print("StoreChangeNotifier latency after sqlite3 exit: \(latencies)")
            #expect(latencies.allSatisfy { $0 < .milliseconds(250) })
            group.cancelAll()
        }
        // Cancelling the consumer stops watching the store.
        try await eventually("watch released") { !notifier.isWatching }
        try store.close()
    }

    @Test func noticesTheAgentsOwnAndInProcessCommitsToo() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let notifier = try StoreChangeNotifier(path: store.path)
        let recorder = NoticeRecorder()
        let app = try appConnection(store.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in notifier { recorder.record(notice) } }
            let start = ContinuousClock.now
            try await app.write { db in try db.execute(sql: "INSERT INTO items VALUES (1, 'x', NULL)") }
            try await eventually("one notice", timeout: .seconds(30)) { recorder.count == 1 }
            if let noticed = recorder.last { print("StoreChangeNotifier latency after in-process commit: \(noticed - start)") }
            try await store.apply([serverEntry(1, [.insert("items", .integer(2), ["name": .text("y")])])])
            try await eventually("two notices", timeout: .seconds(30)) { recorder.count == 2 }
            group.cancelAll()
        }
        try app.close()
        try store.close()
    }

    @Test func staysQuietAndIdleWithoutCommits() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'x', NULL)")
        // A service of its own: other tests' stores do not wake its thread.
        let service = CommitWatchService()
        let notifier = try StoreChangeNotifier(path: store.path, service: service)
        let recorder = NoticeRecorder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in notifier { recorder.record(notice) } }
            try await eventually("watcher CPU clock") { service.cpuClock != nil }
            let clock = try #require(service.cpuClock)
            // Reads, a checkpoint that truncates the WAL, a rolled-back write, and files of
            // another store in the same directory: file events, but no commit.
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM items").status == 0)
            #expect(try await sqlite3(store.path, "PRAGMA wal_checkpoint(TRUNCATE)").status == 0)
            #expect(try await sqlite3(store.path, "BEGIN; DELETE FROM items; ROLLBACK;").status == 0)
            #expect(try await sqlite3(dir.appending("other.sqlite"), "CREATE TABLE t (x); INSERT INTO t VALUES (1)").status == 0)
            // Asserting an absence needs a wait: nothing may arrive within 300 ms.
            try await Task.sleep(for: .milliseconds(300))
            #expect(recorder.count == 0)
            // Idle: the watcher thread burns (almost) no CPU while nothing happens.
            let before = cpuTime(clock)
            try await Task.sleep(for: .milliseconds(500))
            let idle = cpuTime(clock) - before
            #expect(idle < .milliseconds(5), "watcher used \(idle) of CPU while idle")
            // And it still notices the next real commit.
            try await sqlite3(store.path, "DELETE FROM items")
            try await eventually("one notice", timeout: .seconds(30)) { recorder.count == 1 }
            group.cancelAll()
        }
        try store.close()
    }

    @Test func stopEndsTheSequence() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let notifier = try StoreChangeNotifier(path: store.path)
        notifier.stop()
        var count = 0
        for await _ in notifier { count += 1 }
        #expect(count == 0)
        try await eventually("watch released") { !notifier.isWatching }
        try store.close()
    }

    @Test func watchingAMissingStoreIsAnErrorAndCreatesNothing() throws {
        #expect(throws: StoreError.self) { try StoreChangeNotifier(path: "/nonexistent/dir/store.sqlite") }
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        #expect(throws: StoreError.self) { try StoreChangeNotifier(path: dir.appending("missing.sqlite")) }
        #expect(!FileManager.default.fileExists(atPath: dir.appending("missing.sqlite")))
    }
}
