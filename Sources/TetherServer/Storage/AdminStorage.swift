import Foundation
import TetherProtocol

/// The operator's commands on partitions (the admin API and the console, through
/// ``ServerControl``): status, snapshots, restores, terminate-sync and online backups.
package protocol AdminStorage: Sendable {
    func partitions() async throws -> [PartitionStatistics]
    func snapshot(of partition: PartitionName, now: Date) async throws -> SnapshotRecord
    /// The partition's snapshots, newest first (the console lists them beside the restore form).
    func snapshots(of partition: PartitionName) async throws -> [SnapshotRecord]
    /// Rolls state, history and client files back to the snapshot, and records the window it
    /// drops: a heal (devices give it back, ``HealStorage``) or a rollback. Returns the head and
    /// the record (nil when the restore dropped nothing). Throws ``StorageError/notFound``.
    /// Increments the partition's epoch (``HistoryReading/epoch(of:)``).
    func restore(_ partition: PartitionName, to snapshot: String, mode: RestoreMode, now: Date) async throws -> (PartitionHead, HealRecord?)
    /// Marks sync terminated and forgets every client file of every partition, atomically.
    func terminateSync() async throws -> Int
    /// A consistent copy of everything, while the server runs (SQLite online backup).
    func backup(to path: String) async throws
}

extension AdminStorage {
    /// ``restore(_:to:mode:now:)`` as a rollback: the window it drops stays lost.
    package func restore(_ partition: PartitionName, to snapshot: String) async throws -> PartitionHead {
        try await restore(partition, to: snapshot, mode: .rollback, now: Date()).0
    }
}
