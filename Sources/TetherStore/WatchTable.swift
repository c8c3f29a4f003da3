import Foundation

/// One store watched by the ``CommitWatchService``.
struct WatchedStore {
    let path: String
    /// The store's file names in its directory: the database, its `-wal` and `-journal`.
    let names: Set<String>
    /// The inotify watch descriptor of its directory (shared with the stores beside it), which
    /// reports the store's files created, moved in and removed — not the writes to the files of
    /// other databases in the directory.
    let directory: Int32
    /// The watch descriptors of its database file and its `-wal` (writes: `IN_MODIFY`), for the
    /// files that existed when last looked at (``CommitWatchService`` adds the `-wal`'s when it
    /// is created).
    var files: Set<Int32> = []
    /// The fingerprint last read.
    var last: CommitProbe.Fingerprint
    /// While re-checking after an event: the index into `settleDelays` and when the next check is due.
    var settleIndex: Int?
    var settleDeadline: ContinuousClock.Instant?
    let continuation: AsyncStream<StoreCommit>.Continuation

    init(path: String, names: Set<String>, directory: Int32, last: CommitProbe.Fingerprint, continuation: AsyncStream<StoreCommit>.Continuation) {
        self.path = path
        self.names = names
        self.directory = directory
        self.last = last
        self.continuation = continuation
    }

    /// Whether a directory event names one of the store's files.
    func isNamed(by events: FileEvents) -> Bool {
        events.names[directory].map { !$0.isDisjoint(with: names) } ?? false
    }
}

/// The watched stores of a ``CommitWatchService`` and the watch descriptors they share (a
/// directory's, or a file's when the same store is watched twice); decides which stores to check
/// after an event or at a re-check. Used under the service's lock.
struct WatchTable {
    private var stores: [UInt64: WatchedStore] = [:]
    /// The stores using each watch descriptor (directory or file).
    private var users: [Int32: Set<UInt64>] = [:]
    private var nextID: UInt64 = 0

    var isEmpty: Bool { stores.isEmpty }
    var count: Int { stores.count }
    func contains(_ id: UInt64) -> Bool { stores[id] != nil }
    func store(_ id: UInt64) -> WatchedStore? { stores[id] }

    mutating func add(_ store: WatchedStore) -> UInt64 {
        nextID += 1
        stores[nextID] = store
        for wd in store.files.union([store.directory]) { users[wd, default: []].insert(nextID) }
        return nextID
    }

    /// Records that store `id` watches a file through `wd` (a descriptor it may hold already).
    mutating func addFile(_ wd: Int32, to id: UInt64) {
        guard stores[id] != nil else { return }
        stores[id]?.files.insert(wd)
        users[wd, default: []].insert(id)
    }

    /// Forgets a watch the kernel removed (`IN_IGNORED`: its file is gone).
    mutating func removeWatch(_ wd: Int32) {
        guard let ids = users.removeValue(forKey: wd) else { return }
        for id in ids { stores[id]?.files.remove(wd) }
    }

    /// Removes a store; also returns the watch descriptors no other store uses any more.
    mutating func remove(_ id: UInt64) -> (WatchedStore, unused: [Int32])? {
        guard let store = stores.removeValue(forKey: id) else { return nil }
        var unused: [Int32] = []
        for wd in store.files.union([store.directory]) {
            users[wd]?.remove(id)
            if users[wd]?.isEmpty ?? true {
                users[wd] = nil
                unused.append(wd)
            }
        }
        return (store, unused)
    }

    mutating func removeAll() -> [WatchedStore] {
        defer {
            stores = [:]
            users = [:]
        }
        return Array(stores.values)
    }

    /// Starts store `id`'s re-checks as after an event (the first one due after the first delay).
    mutating func startSettling(_ id: UInt64, at now: ContinuousClock.Instant) {
        guard stores[id] != nil else { return }
        stores[id]?.settleIndex = 0
        stores[id]?.settleDeadline = now.advanced(by: .milliseconds(CommitWatchService.settleDelays[0]))
    }

    /// The earliest re-check due, if any.
    var nextDeadline: ContinuousClock.Instant? { stores.values.compactMap(\.settleDeadline).min() }

    /// The stores whose own files a directory event names (created, moved in or removed): their
    /// file watches are renewed.
    func named(by events: FileEvents) -> [(UInt64, String)] {
        stores.compactMap { id, store in store.isNamed(by: events) ? (id, store.path) : nil }
    }

    /// The stores to check now: those whose files the events name or were written (their
    /// re-checks start over), and those whose next re-check is due (their schedule advances).
    mutating func due(after events: FileEvents, at now: ContinuousClock.Instant) -> [(UInt64, String)] {
        let delays = CommitWatchService.settleDelays
        var due: [(UInt64, String)] = []
        for (id, store) in stores {
            var store = store
            if store.isNamed(by: events) || !events.written.isDisjoint(with: store.files) || events.overflowed {
                store.settleIndex = 0
                store.settleDeadline = now.advanced(by: .milliseconds(delays[0]))
            } else if let index = store.settleIndex, let deadline = store.settleDeadline, deadline <= now {
                let next = index + 1
                store.settleIndex = next < delays.count ? next : nil
                store.settleDeadline = next < delays.count ? now.advanced(by: .milliseconds(delays[next])) : nil
            } else {
                continue
            }
            stores[id] = store
            due.append((id, store.path))
        }
        return due
    }

    /// Records a fingerprint read for a store; returns its continuation when the fingerprint
    /// moved (a commit to announce), nil when it did not or the store is no longer watched.
    mutating func record(_ fingerprint: CommitProbe.Fingerprint, for id: UInt64) -> AsyncStream<StoreCommit>.Continuation? {
        guard var store = stores[id], store.last != fingerprint else { return nil }
        store.last = fingerprint
        stores[id] = store
        return store.continuation
    }

    /// The continuation of a store still watched.
    func continuation(of id: UInt64) -> AsyncStream<StoreCommit>.Continuation? { stores[id]?.continuation }
}

/// What one drain of the inotify queue reported.
struct FileEvents {
    /// Names created, moved in or removed, by watch descriptor (directory).
    var names: [Int32: Set<String>] = [:]
    /// The file watches whose files were written.
    var written: Set<Int32> = []
    /// The file watches the kernel removed (their files are gone).
    var ignored: Set<Int32> = []
    /// The queue overflowed: any store may have changed.
    var overflowed = false
}
