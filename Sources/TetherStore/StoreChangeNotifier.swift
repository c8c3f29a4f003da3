import Foundation
import GRDB
import Glibc
import Synchronization

/// One commit (or a burst of commits) noticed on a store.
public struct StoreCommit: Sendable, Hashable {
    /// When the watcher confirmed the commit.
    public var noticedAt: ContinuousClock.Instant
}

/// An `AsyncSequence` that yields when a connection other than the notifier's own commits to
/// the store file at `path` (applications in any process, and the agent's own writes), without
/// polling while idle. See docs/store.md, "Change notification".
///
/// Mechanism: a dedicated thread (never a cooperative one) blocks in `poll(2)` on an inotify
/// descriptor watching the store's directory (the `-wal` file is created, truncated and
/// recreated by checkpoints, so the directory is watched, filtered by name) and on a wake-up
/// pipe used to stop it. A write to `<store>-wal` or `<store>` wakes it; it then reads, on its
/// own connection and in one snapshot, `PRAGMA data_version` (which changes when another
/// connection committed, but also after a checkpoint that restarted the WAL) and the store's
/// commit fingerprint: the last assigned change seq and the `_tether_meta` row. It yields only
/// when the fingerprint moved, so checkpoints, rolled-back and content-free transactions never
/// yield, while every captured application change (a new seq) and every agent apply, reset or
/// metadata change does. Because a writer's last WAL write can precede the commit's visibility
/// by its fsync, it re-checks with a backoff during about a second after an event (a commit whose
/// fsync takes longer is noticed at the next event). Bursts coalesce: at most one notice is
/// buffered.
///
/// One consumer at a time. The watcher stops, and its descriptors and connection are released,
/// when the consuming task is cancelled, `stop()` is called, or the notifier and its iterator
/// are both released.
public final class StoreChangeNotifier: AsyncSequence, Sendable {
    public typealias Element = StoreCommit

    private let stream: AsyncStream<StoreCommit>
    let watcher: CommitWatcher

    /// Starts watching. Throws when the store cannot be opened or inotify is unavailable.
    public init(path: String) throws(StoreError) {
        let (stream, continuation) = AsyncStream<StoreCommit>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        watcher = try CommitWatcher(path: path, continuation: continuation)
        let watcher = self.watcher
        continuation.onTermination = { _ in watcher.stop() }
        let thread = Thread { watcher.run() }
        thread.name = "tether-notify"
        thread.start()
    }

    deinit { watcher.stop() }

    public func makeAsyncIterator() -> Iterator { Iterator(base: stream.makeAsyncIterator(), owner: self) }

    /// Keeps the notifier (and so the watcher) alive while a consumer iterates.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<StoreCommit>.Iterator
        let owner: StoreChangeNotifier

        public mutating func next() async -> StoreCommit? { await base.next() }
    }

    /// Stops watching and ends the sequence.
    public func stop() { watcher.stop() }
}
