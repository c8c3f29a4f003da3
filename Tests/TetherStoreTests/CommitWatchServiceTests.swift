import Foundation
import GRDB
import Glibc
import Testing
import TetherTestSupport
@testable import TetherStore

/// Every test here has a service of its own: what it counts (threads, watched stores, CPU)
/// is not disturbed by the other tests' stores.
@Suite struct CommitWatchServiceTests {
    /// A notifier for `path` with its consumer task recording into the returned recorder.
    private func consume(_ notifier: StoreChangeNotifier, in group: inout ThrowingTaskGroup<Void, any Error>) -> NoticeRecorder {
        let recorder = NoticeRecorder()
        group.addTask { for await notice in notifier { recorder.record(notice) } }
        return recorder
    }

    @Test func oneThreadNoticesCommitsOfSeveralStoresFromAnotherProcess() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.appending("other"), withIntermediateDirectories: true)
        // Three stores in one directory (one inotify watch) and one in another.
        let stores = [
            try await makeStore(dir, name: "a.sqlite"), try await makeStore(dir, name: "b.sqlite"),
            try await makeStore(dir, name: "c.sqlite"), try await makeStore(dir, name: "other/d.sqlite"),
        ]
        let service = CommitWatchService()
        let notifiers = try stores.map { try StoreChangeNotifier(path: $0.path, service: service) }
        #expect(service.watchedStores == 4)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let recorders = notifiers.map { consume($0, in: &group) }
            for round in 1...2 {
                for (index, store) in stores.enumerated() {
                    let before = recorders[index].count
                    #expect(try await sqlite3(store.path, "INSERT INTO items VALUES (\(round), 'x', NULL)").status == 0)
                    try await eventually("commit \(round) to store \(index) noticed", timeout: .seconds(30)) {
                        recorders[index].count > before
                    }
                }
            }
            group.cancelAll()
        }
        #expect(service.threadsStarted == 1)
        try await eventually("every watch released, the thread ended") { !service.isRunning }
        #expect(service.watchedStores == 0)
        for store in stores { try store.close() }
    }

    @Test func oneStoresCommitsDoNotWakeAnothersConsumer() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        let busy = try await makeStore(dir, name: "busy.sqlite")
        let quiet = try await makeStore(dir, name: "quiet.sqlite")
        let service = CommitWatchService()
        let busyNotifier = try StoreChangeNotifier(path: busy.path, service: service)
        let quietNotifier = try StoreChangeNotifier(path: quiet.path, service: service)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let busyNotices = consume(busyNotifier, in: &group)
            let quietNotices = consume(quietNotifier, in: &group)
            for round in 1...3 {
                #expect(try await sqlite3(busy.path, "INSERT INTO items VALUES (\(round), 'x', NULL)").status == 0)
                try await eventually("busy store's commit \(round) noticed", timeout: .seconds(30)) { busyNotices.count >= round }
            }
            // Through the busy store's re-checks (about a second) and beyond: nothing for the quiet one.
            try await consistently("no notice for the quiet store", for: .milliseconds(1200)) { quietNotices.count == 0 }
            #expect(try await sqlite3(quiet.path, "SELECT count(*) FROM items").status == 0)  // a read: no notice
            #expect(try await sqlite3(quiet.path, "INSERT INTO items VALUES (9, 'q', NULL)").status == 0)
            try await eventually("quiet store's own commit noticed", timeout: .seconds(30)) { quietNotices.count >= 1 }
            #expect(quietNotices.count == 1)
            group.cancelAll()
        }
        try busy.close()
        try quiet.close()
    }

    @Test func stoppingOneStoresNotifierLeavesTheOthersWorking() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        let first = try await makeStore(dir, name: "first.sqlite")
        let second = try await makeStore(dir, name: "second.sqlite")
        let service = CommitWatchService()
        let firstNotifier = try StoreChangeNotifier(path: first.path, service: service)
        let secondNotifier = try StoreChangeNotifier(path: second.path, service: service)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let firstNotices = consume(firstNotifier, in: &group)
            let secondNotices = consume(secondNotifier, in: &group)
            // The two share their directory's watch: stopping the first must not remove it.
            firstNotifier.stop()
            try await group.next()  // the first consumer's sequence ended
            #expect(!firstNotifier.isWatching)
            #expect(service.watchedStores == 1)
            #expect(try await sqlite3(second.path, "INSERT INTO items VALUES (1, 'x', NULL)").status == 0)
            try await eventually("second store's commit noticed", timeout: .seconds(30)) { secondNotices.count == 1 }
            #expect(try await sqlite3(first.path, "INSERT INTO items VALUES (1, 'x', NULL)").status == 0)
            #expect(try await sqlite3(second.path, "INSERT INTO items VALUES (2, 'x', NULL)").status == 0)
            try await eventually("second store's next commit noticed", timeout: .seconds(30)) { secondNotices.count == 2 }
            #expect(firstNotices.count == 0)
            secondNotifier.stop()
            try await group.waitForAll()
        }
        // The last watch gone, the thread ends and closes its descriptors; a new watch starts another.
        try await eventually("thread ended") { !service.isRunning }
        let again = try StoreChangeNotifier(path: first.path, service: service)
        #expect(service.isRunning)
        #expect(service.threadsStarted == 2)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let notices = consume(again, in: &group)
            #expect(try await sqlite3(first.path, "INSERT INTO items VALUES (3, 'x', NULL)").status == 0)
            try await eventually("commit noticed by the new thread", timeout: .seconds(30)) { notices.count == 1 }
            group.cancelAll()
        }
        try first.close()
        try second.close()
    }

    /// Only the store's own files are watched for writes: an application writing another
    /// database in the same directory (or a paused partition's store) does not wake the thread.
    @Test func writesToAnotherDatabaseBesideTheStoreDoNotWakeTheWatcher() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let other = dir.appending("other.sqlite")
        #expect(try await sqlite3(other, "PRAGMA journal_mode = WAL; CREATE TABLE t (x)").status == 0)
        let service = CommitWatchService()
        let notifier = try StoreChangeNotifier(path: store.path, service: service)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let notices = consume(notifier, in: &group)
            // 100 commits of ~40 KiB each: hundreds of writes to `other.sqlite-wal`.
            let script = (1...100).map { _ in "BEGIN; INSERT INTO t SELECT randomblob(400) FROM generate_series(1, 100); COMMIT;" }
            #expect(try await sqlite3(other, script.joined(separator: "\n")).status == 0)
            // Its `-wal` and `-shm` created and removed by the one sqlite3 process: a few wake-ups.
            #expect(service.wakeups < 10, "woke \(service.wakeups) times for another database's writes")
            #expect(notices.count == 0)
            let before = service.wakeups
            #expect(try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'x', NULL)").status == 0)
            try await eventually("the store's own commit noticed", timeout: .seconds(30)) { notices.count == 1 }
            #expect(service.wakeups > before)
            group.cancelAll()
        }
        try store.close()
    }

    /// A `-wal` the store did not have when watching started is watched once created: a
    /// connection that stays open and commits again (only writing the `-wal`) is noticed each time.
    @Test func aWalCreatedAfterWatchingStartedIsWatched() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try store.close()
        // The last connection to close checkpoints the `-wal` and removes it.
        #expect(try await sqlite3(store.path, "SELECT count(*) FROM items").status == 0)
        #expect(!FileManager.default.fileExists(atPath: store.path + "-wal"))
        let service = CommitWatchService()
        let notifier = try StoreChangeNotifier(path: store.path, service: service)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let notices = consume(notifier, in: &group)
            let writer = try DatabaseQueue(path: store.path)
            for round in 1...3 {
                try await writer.write { db in try db.execute(sql: "INSERT INTO items VALUES (?, 'x', NULL)", arguments: [round]) }
                try await eventually("commit \(round) noticed", timeout: .seconds(30)) { notices.count == round }
            }
            try writer.close()
            group.cancelAll()
        }
    }

    /// A commit that became visible only after watching started read its fingerprint, with its
    /// WAL writes (the only file events it raises) before the watches existed: the re-checks a
    /// watch starts with announce it, without any later event. (Seen in `make test` as an
    /// upload that never came: the agent's session started watching while the application's
    /// commit was in its fsync.)
    @Test func aCommitHiddenWhenWatchingStartedIsAnnouncedWithoutAnotherEvent() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let before = try CommitProbe.read(path: store.path)
        #expect(try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'x', NULL)").status == 0)
        let service = CommitWatchService()
        let (stream, continuation) = AsyncStream<StoreCommit>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = try service.watch(path: store.path, continuation: continuation) { _ in before }
        let notices = NoticeRecorder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in stream { notices.record(notice) } }
            try await eventually("the hidden commit announced", timeout: .seconds(30)) { notices.count == 1 }
            group.cancelAll()
            service.unwatch(id)
        }
        try store.close()
    }

    /// The watcher's reads open and close a connection: as the only connection to the store,
    /// its closing must neither checkpoint nor delete the WAL (file events that would wake it
    /// again and again), nor create anything.
    @Test func staysIdleWhenItsReadsAreTheStoresOnlyConnection() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try store.close()
        let service = CommitWatchService()
        let notifier = try StoreChangeNotifier(path: store.path, service: service)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let notices = consume(notifier, in: &group)
            #expect(try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'x', NULL)").status == 0)
            try await eventually("commit noticed", timeout: .seconds(30)) { notices.count == 1 }
            let clock = try #require(service.cpuClock)
            // Past the dense re-checks (about a second; the next is a second later), the thread sleeps.
            try await consistently("one notice only", for: .milliseconds(1200)) { notices.count == 1 }
            let before = cpuTime(clock)
            try await consistently("one notice only", for: .milliseconds(500)) { notices.count == 1 }
            let idle = cpuTime(clock) - before
            #expect(idle < .milliseconds(5), "watcher used \(idle) of CPU after its re-checks")
            group.cancelAll()
        }
    }

    /// What a read of the fingerprint costs (a connection opened and closed each time), in
    /// this thread's CPU time: wall time would count what else a loaded machine runs.
    @Test func aFingerprintReadIsCheap() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-watch")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let each = try Self.cpuTimeOnThisThread {
            for _ in 0..<100 { _ = try CommitProbe.read(path: store.path) }
        } / 100
        print("CommitProbe.read: \(each) of CPU per read (connection opened, read, closed)")
        #expect(each < .milliseconds(20))
        #expect(try CommitProbe.read(path: store.path) != nil)
        try store.close()
    }

    /// The CPU time `body` takes on the calling thread (it does not await, so it stays on it).
    private static func cpuTimeOnThisThread(_ body: () throws -> Void) rethrows -> Duration {
        let before = cpuTime(CLOCK_THREAD_CPUTIME_ID)
        try body()
        return cpuTime(CLOCK_THREAD_CPUTIME_ID) - before
    }
}
