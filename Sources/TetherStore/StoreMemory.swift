import CTetherShims

/// The process-wide SQLite settings that decide how much memory an idle store costs.
///
/// SQLite gives every new connection an initial page cache of about 20 pages (≈ 85 KiB) in
/// one allocation, used or not; an agent kept up to five connections per partition (writer,
/// readers, its own commit watcher's, before the shared ``CommitWatchService``), so 100 idle
/// partitions held some 40 MB of it (measured with heaptrack, docs/store.md "Memory"). Without it, pages are allocated as they are used: an
/// idle store's connection holds the few pages of its schema, a busy one grows its cache to
/// `cache_size` as before.
package enum StoreMemory {
    /// Call once at the start of the process, before any store or database opens. False when
    /// SQLite refused (it was initialised already): stores work the same, with more memory.
    ///
    /// It also caps glibc's malloc at two arenas. By default every thread that allocates under
    /// contention gets an arena of its own (up to 8 per core), and memory freed in one stays
    /// there: a client reset's SQLite work moving between GRDB's and NIO's threads left the
    /// agent's peak RSS ~10 MB higher at 1M rows, growing with the partition (BENCHMARKS.md).
    @discardableResult
    package static func configureProcess() -> Bool {
        _ = tether_malloc_arena_max(2)
        return tether_sqlite_no_bulk_page_cache() == 0
    }

    /// Gives the memory malloc holds free back to the system: after a bootstrap or a client
    /// reset, whose transient allocations (a recovery's unsynced changes, SQLite's caches)
    /// would otherwise stay in the process, counted in its RSS, until reused.
    package static func releaseFreedMemory() {
        _ = tether_malloc_trim()
    }
}
