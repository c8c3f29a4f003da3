import Foundation

/// One store watched by the ``CommitWatchService``.
struct WatchedStore {
    let path: String
    /// The store's file names in its directory: the database, its `-wal` and `-journal`.
    let names: Set<String>
    /// The inotify watch descriptor of its directory (shared with the stores beside it).
    let directory: Int32
    /// The fingerprint last read.
    var last: CommitProbe.Fingerprint
    /// While re-checking after an event: the index into `settleDelays` and when the next check is due.
    var settleIndex: Int?
    var settleDeadline: ContinuousClock.Instant?
    let continuation: AsyncStream<StoreCommit>.Continuation
}

/// The watched stores of a ``CommitWatchService`` and the directories their watches share;
/// decides which stores to check after an event or at a re-check. Used under the service's lock.
struct WatchTable {
    private var stores: [UInt64: WatchedStore] = [:]
    /// The stores in each watched directory.
    private var directories: [Int32: Set<UInt64>] = [:]
    private var nextID: UInt64 = 0

    var isEmpty: Bool { stores.isEmpty }
    var count: Int { stores.count }
    func contains(_ id: UInt64) -> Bool { stores[id] != nil }

    mutating func add(_ store: WatchedStore) -> UInt64 {
        nextID += 1
        stores[nextID] = store
        directories[store.directory, default: []].insert(nextID)
        return nextID
    }

    /// Removes a store; also says whether its directory's watch has no store left.
    mutating func remove(_ id: UInt64) -> (WatchedStore, directoryUnused: Bool)? {
        guard let store = stores.removeValue(forKey: id) else { return nil }
        directories[store.directory]?.remove(id)
        let unused = directories[store.directory]?.isEmpty ?? true
        if unused { directories[store.directory] = nil }
        return (store, unused)
    }

    mutating func removeAll() -> [WatchedStore] {
        defer {
            stores = [:]
            directories = [:]
        }
        return Array(stores.values)
    }

    /// The earliest re-check due, if any.
    var nextDeadline: ContinuousClock.Instant? { stores.values.compactMap(\.settleDeadline).min() }

    /// The stores to check now: those whose files the events name (their re-checks start
    /// over), and those whose next re-check is due (their schedule advances).
    mutating func due(after events: FileEvents, at now: ContinuousClock.Instant) -> [(UInt64, String)] {
        let delays = CommitWatchService.settleDelays
        var due: [(UInt64, String)] = []
        for (id, store) in stores {
            var store = store
            let named = events.names[store.directory].map { !$0.isDisjoint(with: store.names) } ?? false
            if named || events.overflowed {
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
}

/// What one drain of the inotify queue reported.
struct FileEvents {
    /// Names created, written or removed, by watch descriptor (directory).
    var names: [Int32: Set<String>] = [:]
    /// The queue overflowed: any store may have changed.
    var overflowed = false
}
