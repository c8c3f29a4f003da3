import Foundation
import GRDB
import Glibc
import Synchronization

/// The watcher behind `StoreChangeNotifier`: owns the inotify descriptor, the wake-up pipe and
/// a connection for `PRAGMA data_version`, all used by its one thread. Every stored property is
/// Sendable; the descriptors are closed once, under `state`, by the thread when it ends.
final class CommitWatcher: Sendable {
    private struct State {
        var stopRequested = false
        var closed = false
        var cpuClock: clockid_t?
    }

    private let path: String
    private let names: Set<String>
    private let inotify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let connection: DatabaseQueue
    private let continuation: AsyncStream<StoreCommit>.Continuation
    private let state = Mutex(State())
    /// The probe when watching started: commits after `init` are all noticed.
    private let initialProbe: Probe?
    /// Delays of the re-checks after a file event, in milliseconds (about 1 s in all). A commit
    /// becomes visible only after the writer's fsync of the WAL, which raises no event of its own.
    static let settleDelays: [Int32] = [1, 2, 3, 4, 5, 5, 10, 10, 20, 40, 80, 160, 320, 400]

    init(path: String, continuation: AsyncStream<StoreCommit>.Continuation) throws(StoreError) {
        self.path = path
        self.continuation = continuation
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let base = url.lastPathComponent
        names = [base, base + "-wal", base + "-journal"]
        // Watching must not create an empty database where the store is expected.
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.io(path: path, operation: "open", errno: ENOENT)
        }
        do {
            var config = Configuration()
            config.busyMode = .timeout(PartitionStore.busyTimeout)
            config.label = "tether.notify"
            connection = try DatabaseQueue(path: path, configuration: config)
            initialProbe = try connection.read(Self.probe)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { throw StoreError.io(path: directory, operation: "inotify_init1", errno: errno) }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            let error = errno
            Glibc.close(inotify)
            throw StoreError.io(path: directory, operation: "inotify_add_watch", errno: error)
        }
        var pipeFds: [Int32] = [-1, -1]
        guard pipe(&pipeFds) == 0 else {
            let error = errno
            Glibc.close(inotify)
            throw StoreError.io(path: directory, operation: "pipe", errno: error)
        }
        for fd in pipeFds {
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = pipeFds[0]
        wakeWrite = pipeFds[1]
    }

    /// Wakes the thread and makes it end. Safe to call any number of times, from anywhere.
    func stop() {
        state.withLock { state in
            state.stopRequested = true
            guard !state.closed else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(wakeWrite, &byte, 1)
        }
    }

    /// True once the thread ended and released its descriptors.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// The watcher thread's CPU-time clock (for tests measuring idle cost), once it runs.
    var cpuClock: clockid_t? { state.withLock { $0.cpuClock } }

    func run() {
        var clock = clockid_t()
        if pthread_getcpuclockid(pthread_self(), &clock) == 0 { state.withLock { $0.cpuClock = clock } }
        var last = initialProbe
        var settleIndex: Int?  // index into settleDelays while re-checking after an event
        // Only whether something changed matters, not each event: a small buffer read until
        // empty does (it was 64 KiB per store, a tenth of an idle partition's memory).
        var buffer = [UInt8](repeating: 0, count: 4 * 1024)
        while !state.withLock({ $0.stopRequested }) {
            var fds = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let timeout = settleIndex.map { Self.settleDelays[$0] } ?? -1
            let ready = poll(&fds, 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[1].revents != 0 { break }
            var check = false
            if fds[0].revents != 0 {
                if readEvents(&buffer) {
                    check = true
                    settleIndex = 0
                }
            } else if ready == 0, let index = settleIndex {
                check = true
                settleIndex = index + 1 < Self.settleDelays.count ? index + 1 : nil
            }
            guard check, let probe = try? connection.read(Self.probe), probe.dataVersion != last?.dataVersion else {
                continue
            }
            let moved = probe.fingerprint != last?.fingerprint
            last = probe
            if moved { continuation.yield(StoreCommit(noticedAt: .now)) }
        }
        continuation.finish()
        state.withLock { state in
            state.closed = true
            Glibc.close(inotify)
            Glibc.close(wakeRead)
            Glibc.close(wakeWrite)
        }
        try? connection.close()
    }

    /// Drains the inotify queue; true when an event concerned the store's files (or the
    /// queue overflowed, which may have hidden one).
    private func readEvents(_ buffer: inout [UInt8]) -> Bool {
        var relevant = false
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return relevant }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true }
                    if length > 0 {
                        let nameBytes = raw[(offset + header)..<(offset + header + length)].prefix { $0 != 0 }
                        if names.contains(String(decoding: nameBytes, as: UTF8.self)) { relevant = true }
                    }
                    offset += header + length
                }
            }
        }
    }

    /// What the watcher compares between two checks.
    struct Probe: Sendable, Equatable {
        var dataVersion: Int64
        /// The last assigned change seq and the metadata row; nil for a file without them.
        var fingerprint: [DatabaseValue]?
    }

    static func probe(_ db: Database) throws -> Probe {
        let version = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        guard try db.tableExists("_tether_meta") else { return Probe(dataVersion: version, fingerprint: nil) }
        let seq = try DatabaseValue.fetchOne(db, sql: ChangeLog.lastAssignedSeqSQL)
        let meta = try Row.fetchOne(db, sql: "SELECT * FROM _tether_meta WHERE id = 1")
        return Probe(dataVersion: version, fingerprint: [seq ?? .null] + (meta.map { Array($0.databaseValues) } ?? []))
    }
}
