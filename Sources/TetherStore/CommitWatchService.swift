import Foundation
import Glibc
import Synchronization

/// The one watcher behind every ``StoreChangeNotifier`` of a process: one thread (never a
/// cooperative one), one inotify descriptor and one wake-up pipe, whatever the number of stores.
/// A store's directory is watched for its files created, moved in or removed, and the store's
/// database and `-wal` files for writes: writes to other files in the directory (another
/// database beside the store, a paused partition's store) do not wake the thread. Each watched store keeps only its names, its directory's
/// watch, its last commit fingerprint and its re-check schedule; the fingerprint is read on a
/// connection opened for the read and closed after it (``CommitProbe``).
///
/// The thread starts with the first watched store and ends, closing its descriptors, when the
/// last one is released; a later watch starts it again. See docs/store.md, "Change notification".
package final class CommitWatchService: Sendable {
    /// The service of the process (the agent's partitions all use it).
    package static let shared = CommitWatchService()

    /// Delays of the re-checks after a file event (and after a watch starts), in milliseconds:
    /// dense for about a second, then sparse until about 31 s. A commit becomes visible only
    /// after the writer's fsync of the WAL, which raises no event of its own, and on a loaded
    /// machine that fsync can take seconds; a commit still hidden after the last re-check is
    /// noticed at the next event.
    static let settleDelays: [Int] = [1, 2, 3, 4, 5, 5, 10, 10, 20, 40, 80, 160, 320, 400, 1000, 2000, 4000, 8000, 15000]

    struct Descriptors: Sendable {
        var inotify: Int32
        var wakeRead: Int32
        var wakeWrite: Int32
    }

    struct State {
        var watches = WatchTable()
        /// Set while the thread runs.
        var descriptors: Descriptors?
        var cpuClock: clockid_t?
        var threadsStarted = 0
        /// How many times the thread woke for file events (for tests).
        var wakeups = 0
    }

    let state = Mutex(State())

    package init() {}

    /// Starts watching the store at `path`: `continuation` gets a notice after each commit
    /// (burst) from now on. Throws when the store cannot be read or inotify is unavailable.
    /// `readFingerprint` reads the fingerprint watching starts from (tests pass one that
    /// predates a commit, as a read racing the commit's fsync would).
    func watch(
        path: String, continuation: AsyncStream<StoreCommit>.Continuation,
        readFingerprint: (String) throws -> CommitProbe.Fingerprint = CommitProbe.read(path:)
    ) throws(StoreError) -> UInt64 {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let base = url.lastPathComponent
        // Watching must not create an empty database where the store is expected.
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.io(path: path, operation: "open", errno: ENOENT)
        }
        // The fingerprint when watching started: commits after this are all noticed.
        let initial: CommitProbe.Fingerprint
        do { initial = try readFingerprint(path) } catch { throw StoreError.wrap(error, path: path) }
        let result: Result<UInt64, StoreError> = state.withLock { state in
            let descriptors: Descriptors
            if let running = state.descriptors {
                descriptors = running
            } else {
                switch Self.openDescriptors(directory: directory) {
                case .failure(let error): return .failure(error)
                case .success(let opened): descriptors = opened
                }
            }
            let wd = inotify_add_watch(descriptors.inotify, directory, Self.directoryMask)
            guard wd >= 0 else {
                let error = errno
                if state.descriptors == nil { Self.close(descriptors) }
                return .failure(StoreError.io(path: directory, operation: "inotify_add_watch", errno: error))
            }
            let id = state.watches.add(
                WatchedStore(
                    path: path, names: [base, base + "-wal", base + "-journal"], directory: wd, last: initial,
                    continuation: continuation))
            // A commit whose WAL writes came before these watches but which became visible only
            // after the fingerprint was read raises no event: the store re-checks from the start
            // as after an event (a running thread is woken to take the new deadline).
            state.watches.startSettling(id, at: .now)
            // After the directory's watch: a `-wal` created from now on is reported by it.
            if let error = Self.watchFiles(of: id, path: path, in: &state.watches, inotify: descriptors.inotify) {
                for wd in state.watches.remove(id)?.unused ?? [] { _ = inotify_rm_watch(descriptors.inotify, wd) }
                if state.descriptors == nil { Self.close(descriptors) }
                return .failure(StoreError.io(path: path, operation: "inotify_add_watch", errno: error))
            }
            if state.descriptors == nil {
                state.descriptors = descriptors
                state.threadsStarted += 1
                let thread = Thread { [self] in run(descriptors) }
                thread.name = "tether-notify"
                thread.start()
            } else {
                var byte: UInt8 = 1
                _ = Glibc.write(descriptors.wakeWrite, &byte, 1)
            }
            return .success(id)
        }
        return try result.get()
    }

    /// Stops watching a store and ends its sequence. Safe to call any number of times, from
    /// anywhere (its sequence's termination calls it too).
    func unwatch(_ id: UInt64) {
        let removed: WatchedStore? = state.withLock { state in
            guard let (store, unused) = state.watches.remove(id) else { return nil }
            if let descriptors = state.descriptors {
                for wd in unused { _ = inotify_rm_watch(descriptors.inotify, wd) }
                // The thread recomputes its timeout, or ends with the last store.
                var byte: UInt8 = 1
                _ = Glibc.write(descriptors.wakeWrite, &byte, 1)
            }
            return store
        }
        // Outside the lock: finishing runs the sequence's termination handler, which comes back here.
        removed?.continuation.finish()
    }

    /// Whether the store of `id` is still watched.
    func isWatching(_ id: UInt64) -> Bool { state.withLock { $0.watches.contains(id) } }

    /// Whether the thread runs (and holds its descriptors).
    package var isRunning: Bool { state.withLock { $0.descriptors != nil } }

    /// How many stores are watched.
    package var watchedStores: Int { state.withLock { $0.watches.count } }

    /// How many threads this service started so far (one at a time).
    var threadsStarted: Int { state.withLock { $0.threadsStarted } }

    /// How many times the thread woke for file events so far.
    var wakeups: Int { state.withLock { $0.wakeups } }

    /// The thread's CPU-time clock (for tests measuring idle cost), once it runs.
    var cpuClock: clockid_t? { state.withLock { $0.cpuClock } }

    // MARK: The thread

    private func run(_ descriptors: Descriptors) {
        var clock = clockid_t()
        if pthread_getcpuclockid(pthread_self(), &clock) == 0 { state.withLock { $0.cpuClock = clock } }
        // Only which directories and names changed matters, not each event: a small buffer
        // read until empty does.
        var buffer = [UInt8](repeating: 0, count: 4 * 1024)
        var drain = [UInt8](repeating: 0, count: 64)
        while let timeout = nextTimeout(descriptors) {
            var fds = [
                pollfd(fd: descriptors.inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: descriptors.wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                // Cannot wait any more: end every store's sequence rather than go silent.
                failAll(descriptors)
                return
            }
            if fds[1].revents != 0 { while Glibc.read(descriptors.wakeRead, &drain, drain.count) > 0 {} }
            let events = fds[0].revents != 0 ? readEvents(descriptors.inotify, &buffer) : FileEvents()
            let now = ContinuousClock.now
            let (due, unwatchable) = state.withLock { state in
                if fds[0].revents != 0 { state.wakeups += 1 }
                for wd in events.ignored { state.watches.removeWatch(wd) }
                let unwatchable = state.watches.named(by: events).filter { id, path in
                    Self.watchFiles(of: id, path: path, in: &state.watches, inotify: descriptors.inotify) != nil
                }
                return (state.watches.due(after: events, at: now), unwatchable)
            }
            // A store whose new files cannot be watched ends its sequence rather than go silent.
            for (id, _) in unwatchable { unwatch(id) }
            for (id, path) in due where !unwatchable.contains(where: { $0.0 == id }) { check(id, path: path) }
        }
    }

    /// The poll timeout in milliseconds (-1: none), or nil when no store is watched any more:
    /// then the descriptors are closed (under the lock, so that a new watch opens new ones).
    private func nextTimeout(_ descriptors: Descriptors) -> Int32? {
        state.withLock { state in
            guard !state.watches.isEmpty else {
                Self.close(descriptors)
                state.descriptors = nil
                state.cpuClock = nil
                return nil
            }
            guard let deadline = state.watches.nextDeadline else { return -1 }
            let wait = ContinuousClock.now.duration(to: deadline)
            guard wait > .zero else { return 0 }
            let (seconds, attoseconds) = wait.components
            return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        }
    }

    /// Reads the fingerprint of one store and yields when it moved, or when it cannot be read
    /// now (locked past the probe's short timeout, being replaced, damaged): whether a commit
    /// happened is then unknown, so the reader is woken and reads with its own connection —
    /// meeting the real error, if there is one — rather than a commit going unannounced.
    private func check(_ id: UInt64, path: String) {
        let fingerprint: CommitProbe.Fingerprint
        do {
            fingerprint = try CommitProbe.read(path: path)
        } catch {
            state.withLock { $0.watches.continuation(of: id) }?.yield(StoreCommit(noticedAt: .now))
            return
        }
        let continuation = state.withLock { $0.watches.record(fingerprint, for: id) }
        continuation?.yield(StoreCommit(noticedAt: .now))
    }

    private func failAll(_ descriptors: Descriptors) {
        let ended = state.withLock { state in
            let all = state.watches.removeAll()
            Self.close(descriptors)
            state.descriptors = nil
            state.cpuClock = nil
            return all
        }
        for store in ended { store.continuation.finish() }
    }

    /// Drains the inotify queue: the directories and names it reported.
    private func readEvents(_ inotify: Int32, _ buffer: inout [UInt8]) -> FileEvents {
        var events = FileEvents()
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return events }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let wd = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { events.overflowed = true }
                    if length > 0 {
                        let nameBytes = raw[(offset + header)..<(offset + header + length)].prefix { $0 != 0 }
                        events.names[wd, default: []].insert(String(decoding: nameBytes, as: UTF8.self))
                    } else if mask & UInt32(IN_IGNORED) != 0 {
                        events.ignored.insert(wd)
                    } else if mask & UInt32(IN_MODIFY) != 0 {
                        events.written.insert(wd)
                    }
                    offset += header + length
                }
            }
        }
    }

    // MARK: Watches

    /// A store's directory: its files created, moved in (a store replaced by a rename) and
    /// removed. Not `IN_MODIFY`, which would report every write to every file beside the store.
    static let directoryMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE)
    /// A store's database and `-wal`: a commit writes the `-wal` (in rollback mode, the
    /// database). Not `IN_CLOSE_WRITE`: SQLite opens the `-wal` for writing even on a read-only
    /// connection, so closing the watcher's own read would wake it again.
    static let fileMask = UInt32(IN_MODIFY)

    /// Watches the store's database and `-wal` as they are now (either may be missing: a file is
    /// watched when the directory reports it created; a file already watched keeps its
    /// descriptor), under the service's lock. Returns the error of a watch that failed otherwise
    /// (no more watches allowed, no access).
    private static func watchFiles(of id: UInt64, path: String, in watches: inout WatchTable, inotify: Int32) -> Int32? {
        for file in [path, path + "-wal"] {
            let wd = inotify_add_watch(inotify, file, fileMask)
            if wd >= 0 {
                watches.addFile(wd, to: id)
            } else if errno != ENOENT {
                return errno
            }
        }
        return nil
    }

    // MARK: Descriptors

    private static func openDescriptors(directory: String) -> Result<Descriptors, StoreError> {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { return .failure(.io(path: directory, operation: "inotify_init1", errno: errno)) }
        var pipeFds: [Int32] = [-1, -1]
        guard pipe(&pipeFds) == 0 else {
            let error = errno
            Glibc.close(inotify)
            return .failure(.io(path: directory, operation: "pipe", errno: error))
        }
        for fd in pipeFds {
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return .success(Descriptors(inotify: inotify, wakeRead: pipeFds[0], wakeWrite: pipeFds[1]))
    }

    private static func close(_ descriptors: Descriptors) {
        Glibc.close(descriptors.inotify)
        Glibc.close(descriptors.wakeRead)
        Glibc.close(descriptors.wakeWrite)
    }
}
