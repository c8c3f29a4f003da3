import CTetherShims
import Foundation
import GRDB
import Synchronization

/// The agent's connections to one store: a GRDB `DatabasePool` (writer and readers) that an idle
/// store closes entirely and opens again on its next use (docs/store.md, "Memory").
///
/// Every access goes through ``withPool(_:)``, which counts it in progress from before it
/// reaches the pool until after it returns: ``closeIfIdle()`` closes only when none is, so a
/// close never meets an access — a reset's rewrite that outlasts the idle interval included.
/// The pool is opened and closed under the same lock an access takes it under, so there is
/// never more than one pool (one writer) for the store.
final class StoreConnections: Sendable {
    let path: String
    private let configuration: Configuration
    /// The file the store was opened on (device and inode): a pool is opened again only on it.
    private let file: FileIdentity?
    private let state: Mutex<State>

    private struct State {
        var pool: DatabasePool?
        /// Accesses that hold the pool now.
        var inProgress = 0
        /// Accesses begun and ended so far (each counts twice, ``StoreConnections/uses``).
        var uses: UInt64 = 0
        /// How many times the pool was opened again after an idle close.
        var reopens = 0
        /// Closed for good (``closeForGood()``).
        var closed = false
    }

    /// Takes over `pool`, just opened on `path` with `configuration`.
    init(path: String, configuration: Configuration, pool: DatabasePool) {
        self.path = path
        self.configuration = configuration
        self.file = FileIdentity(path: path)
        self.state = Mutex(State(pool: pool))
    }

    /// Runs `body` with the pool, opening it first if the store was closed while idle. The access
    /// counts as a use when it begins and when it ends; no idle close happens until it ends.
    func withPool<T>(_ body: (DatabasePool) async throws -> T) async throws -> T {
        let pool = try acquire()
        defer { release() }
        return try await body(pool)
    }

    /// Accesses begun and ended so far: unchanged means the store was not used meanwhile.
    var uses: UInt64 { state.withLock { $0.uses } }

    /// Whether the pool is open now (false after an idle close, until the next access).
    var isOpen: Bool { state.withLock { $0.pool != nil } }

    /// How many times the pool was opened again after an idle close.
    var reopens: Int { state.withLock { $0.reopens } }

    /// Closes the pool if no access holds it: its writer and reader connections, with their
    /// parsed schemas, caches and statements, and the connections' temporary tables. The
    /// writer closes without a checkpoint (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`): the WAL stays
    /// as it is, so the close writes nothing, raises no file event for the commit watcher, and
    /// the next open finds the WAL it left. True when the store is closed now (or was already);
    /// false when an access is in progress (nothing done).
    @discardableResult
    func closeIfIdle() -> Bool {
        state.withLock { state in
            guard !state.closed, state.inProgress == 0 else { return state.closed || state.pool == nil }
            guard let pool = state.pool else { return true }
            state.pool = nil
            pool.writeWithoutTransaction { db in
                _ = tether_sqlite_no_checkpoint_on_close(UnsafeMutableRawPointer(db.sqliteConnection))
            }
            do {
                try pool.close()
            } catch {
                // Not closed (GRDB closes all or nothing): kept, the next idle look tries again.
                state.pool = pool
                return false
            }
            return true
        }
    }

    /// Closes the pool for good: later accesses throw. Waits for accesses in progress on the
    /// connections (GRDB's queues) to finish.
    func closeForGood() throws(StoreError) {
        let pool = state.withLock { state in
            state.closed = true
            defer { state.pool = nil }
            return state.pool
        }
        do { try pool?.close() } catch { throw StoreError.wrap(error, path: path) }
    }

    private func acquire() throws(StoreError) -> DatabasePool {
        try state.withLock { (state) throws(StoreError) -> DatabasePool in
            guard !state.closed else {
                throw StoreError.sqlite(path: path, code: 21, message: "the store is closed")  // SQLITE_MISUSE
            }
            let pool: DatabasePool
            if let open = state.pool {
                pool = open
            } else {
                pool = try reopen()
                state.pool = pool
                state.reopens += 1
            }
            state.inProgress += 1
            state.uses &+= 1
            return pool
        }
    }

    private func release() {
        state.withLock { state in
            state.inProgress -= 1
            state.uses &+= 1
        }
    }

    /// Opens the pool again on the file the store was opened on. Refuses a file that is gone or
    /// was replaced meanwhile (a pool would create an empty file, or sync another one).
    private func reopen() throws(StoreError) -> DatabasePool {
        guard let now = FileIdentity(path: path) else {
            throw StoreError.io(path: path, operation: "reopen (the store file is gone)", errno: ENOENT)
        }
        guard now == file else {
            throw StoreError.io(path: path, operation: "reopen (the store file was replaced)", errno: ESTALE)
        }
        try NoFollow.refuseLinks(sqlite: path, place: .store)
        do {
            return try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }
}
