import GRDB
import Synchronization

/// What an idle store gives back (docs/store.md, "Memory").
extension PartitionStore {
    /// How many reads and writes the agent made through the store so far: a count that has not
    /// moved for a while means the store is idle (``releaseMemory()``).
    public var uses: UInt64 { useCount.load(ordering: .relaxed) }

    func noteUse() { useCount.add(1, ordering: .relaxed) }

    /// Frees what an idle store does not need: closes its reader connections (each holds the
    /// parsed schema and its pages) and frees the writer's page cache and prepared statements.
    /// Does not wait for accesses in progress, which finish first; the next read opens a reader
    /// again and the caches refill as pages are used. Does not count as a use.
    public func releaseMemory() { pool.releaseMemoryEventually() }
}
