import Foundation
import TetherProtocol

/// What a download reads of a partition: its head, the salt of a retained version, its epoch,
/// its whole state, its history after a version, and how much of a device's uploads that
/// history holds. ``SessionStreamer`` (a session's state and downloads) and
/// ``ReadyFileBuilder`` (a ready file, built as a download reads) hold it; a bind reads the
/// head, salts and epoch through it.
package protocol HistoryReading: Sendable {
    /// nil when the partition has never been bound.
    func head(of partition: PartitionName) async throws -> PartitionHead?
    /// The salt of `version` when it is in the retained history (or is the base or zero).
    func salt(of partition: PartitionName, version: Int64) async throws -> Int64?
    /// The partition's epoch (0 for a partition never bound or restored; always 0 where the
    /// storage has no fencing, SQLite). A restore increments it, terminate-sync every
    /// partition's: a session records it when it binds, and its uploads and history reads are
    /// refused with ``StorageError/fenced`` once it changed, even before the instance that ran
    /// the command reaches the session's instance with its notification.
    func epoch(of partition: PartitionName) async throws -> Int64
    /// A consistent reader of the partition's whole state at its latest version.
    func openState(of partition: PartitionName) async throws -> any StateReader
    /// A consistent reader of the rows of the partition's state `scopes` may hold at its latest
    /// version: the tables they name, and of a filtered table the rows the filter index finds
    /// when it serves the filters (``StateSelection``), else every row. A superset: the caller
    /// evaluates each row.
    func openState(of partition: PartitionName, holdable scopes: [SubscriptionScope]) async throws -> any StateReader
    /// A consistent reader of the rows a store changing from the `held` scope to the `wanted`
    /// one may gain or lose at the partition's latest version (``StateSelection/init(changingFrom:to:indexed:)``):
    /// a superset of them, never a row whose place both scopes agree on unless the index cannot
    /// tell. The caller evaluates each row under both scopes.
    func openState(of partition: PartitionName, changingFrom held: SubscriptionScope, to wanted: SubscriptionScope) async throws -> any StateReader
    /// Of the filtered tables of `scope` that no index serves, those holding more than `limit`
    /// rows in the partition: a filter the server will not evaluate row by row.
    func unindexedTables(of scope: SubscriptionScope, in partition: PartitionName, over limit: Int) async throws -> [String]
    /// State downloads reading now and waiting for a slot, where the storage bounds them
    /// (PostgreSQL, ``DownloadSlots``); nil where it does not.
    var stateDownloads: (reading: Int, waiting: Int)? { get }
    /// History entries after `version`, oldest first, at most `maxEntries`, stopping once
    /// `maxBytes` of changesets were collected (always at least one entry when there is one).
    func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int) async throws -> [HistoryEntry]
    /// ``history(of:after:maxEntries:maxBytes:)``, refused when the partition's epoch is no longer `epoch`.
    func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int, epoch: Int64) async throws -> [HistoryEntry]
    /// The highest seq of `clientFile` integrated at or before `version` (0 when unknown).
    func integratedSeq(of clientFile: Int64, in partition: PartitionName, atOrBefore version: Int64) async throws -> Int64
}

/// Doubles of the role read whole states (the caller evaluates every row) and refuse nothing.
extension HistoryReading {
    package func openState(of partition: PartitionName, holdable scopes: [SubscriptionScope]) async throws -> any StateReader {
        try await openState(of: partition)
    }

    package func openState(of partition: PartitionName, changingFrom held: SubscriptionScope, to wanted: SubscriptionScope) async throws -> any StateReader {
        try await openState(of: partition)
    }

    package func unindexedTables(of scope: SubscriptionScope, in partition: PartitionName, over limit: Int) async throws -> [String] { [] }
}
