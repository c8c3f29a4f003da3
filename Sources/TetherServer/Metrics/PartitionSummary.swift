import Synchronization

/// Every partition's latest server version, kept in memory by the server as it commits,
/// restores and hears of other instances' commits: `/metrics` reads it (a scrape costs the
/// same whatever the history holds) and the glob-grant cap counts partitions from it.
package final class PartitionSummary: Sendable {
    private let versions = Mutex<[String: Int64]>([:])

    package init() {}

    /// Replaces everything (at start, and on every resynchronization with the storage).
    func replace(with all: [String: Int64]) { versions.withLock { $0 = all } }

    /// A commit: versions only grow, so a late report of an older one changes nothing.
    func committed(_ partition: String, version: Int64) {
        versions.withLock { $0[partition] = max($0[partition] ?? version, version) }
    }

    /// A restore: the version may go down.
    func restored(_ partition: String, version: Int64) { versions.withLock { $0[partition] = version } }

    /// A partition created by a first bind (version 0 until its first commit).
    func created(_ partition: String, version: Int64) {
        versions.withLock { if $0[partition] == nil { $0[partition] = version } }
    }

    var all: [String: Int64] { versions.withLock { $0 } }

    /// The number of partitions whose name satisfies `predicate`.
    func count(where predicate: (String) -> Bool) -> Int {
        versions.withLock { $0.keys.reduce(0) { $0 + (predicate($1) ? 1 : 0) } }
    }

    func contains(_ partition: String) -> Bool { versions.withLock { $0[partition] != nil } }
}
