import Foundation

/// One commit (or a burst of commits) noticed on a store.
package struct StoreCommit: Sendable, Hashable {
    /// When the watcher confirmed the commit.
    package var noticedAt: ContinuousClock.Instant
}

/// An `AsyncSequence` that yields when a connection commits to the store file at `path`
/// (applications in any process, and the agent's own writes), without polling while idle.
/// See docs/store.md, "Change notification".
///
/// Mechanism: one ``CommitWatchService`` per process serves every notifier: its thread (never a
/// cooperative one) blocks in `poll(2)` on one inotify descriptor, with a watch on each store's
/// directory (the `-wal` file is created, truncated and recreated by checkpoints, so the
/// directory is watched, filtered by name), and on a wake-up pipe. A write to `<store>-wal` or
/// `<store>` makes it read, on a connection opened for that read and in one snapshot, the
/// store's commit fingerprint: the last assigned change seq and the `_tether_meta` row
/// (``CommitProbe``). It yields only when the fingerprint moved, so checkpoints, rolled-back
/// and content-free transactions never yield, while every captured application change (a new
/// seq) and every agent apply, reset or metadata change does. Because a writer's last WAL write
/// can precede the commit's visibility by its fsync, it re-checks with a backoff during about 31
/// seconds after an event, and after the watch starts (a commit whose fsync takes longer is
/// noticed at the next event). Bursts
/// coalesce: at most one notice is buffered. One store's events check only that store.
///
/// One consumer at a time. The store stops being watched (its directory's watch is removed
/// with the last store in it, the service's thread and descriptors with the last store of all)
/// when the consuming task is cancelled, `stop()` is called, or the notifier and its iterator
/// are both released. Stopping one notifier leaves the others watching.
package final class StoreChangeNotifier: AsyncSequence, Sendable {
    package typealias Element = StoreCommit

    private let stream: AsyncStream<StoreCommit>
    let service: CommitWatchService
    let id: UInt64

    /// Starts watching. Throws when the store cannot be read or inotify is unavailable.
    package init(path: String, service: CommitWatchService = .shared) throws(StoreError) {
        let (stream, continuation) = AsyncStream<StoreCommit>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        self.service = service
        let id = try service.watch(path: path, continuation: continuation)
        self.id = id
        continuation.onTermination = { _ in service.unwatch(id) }
    }

    deinit { service.unwatch(id) }

    package func makeAsyncIterator() -> Iterator { Iterator(base: stream.makeAsyncIterator(), owner: self) }

    /// Keeps the notifier (and so the watch) alive while a consumer iterates.
    package struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<StoreCommit>.Iterator
        let owner: StoreChangeNotifier

        package mutating func next() async -> StoreCommit? { await base.next() }
    }

    /// Stops watching and ends the sequence.
    package func stop() { service.unwatch(id) }

    /// Whether the store is still watched (false once stopped).
    var isWatching: Bool { service.isWatching(id) }
}
