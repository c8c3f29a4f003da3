import GRDB

/// What an idle store gives back (docs/store.md, "Memory").
extension PartitionStore {
    /// How many reads and writes the agent made through the store so far (each counted when it
    /// begins and when it ends): a count that has not moved for a while means the store is idle
    /// (``releaseMemory()``).
    package var uses: UInt64 { connections.uses }

    /// Closes an idle store's connections — writer and readers, with their parsed schemas,
    /// caches and statements — unless an access is in progress; the store's next read or write
    /// opens them again, as at the first open. Does not count as a use. True when the store's
    /// connections are closed now; false when an access holds them (nothing is done: the store
    /// is not idle).
    @discardableResult
    package func releaseMemory() -> Bool { connections.closeIfIdle() }
}
