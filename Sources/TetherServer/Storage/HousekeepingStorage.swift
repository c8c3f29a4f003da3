import Foundation
import TetherProtocol

/// The storage's chores: the histories checked and repaired at start, every partition's
/// latest version for ``PartitionSummary``, compaction and the expiry of client files (the
/// app at start, ``CompactionService`` and the admin API through ``ServerControl``).
package protocol HousekeepingStorage: Sendable {
    /// Checks every partition's head against its retained history (``HistoryInvariant``) and
    /// repairs one that breaks it (written by a version that restored forward without the
    /// invariant): its history is dropped and its latest version becomes the base.
    func repairHistories() async throws -> [HistoryRepair]
    /// What breaks ``HistoryInvariant`` in `partition` now; empty when it holds.
    func historyProblems(of partition: PartitionName) async throws -> [String]
    /// Every partition's latest version: one row each, nothing counted (``PartitionSummary``).
    func latestVersions() async throws -> [String: Int64]
    /// Drops history entries created before `cutoff`, keeping the newest dropped one as base.
    func compact(olderThan cutoff: Date) async throws -> CompactionReport
    /// Client-file housekeeping: marks the client files of `bound` (sessions open now) seen at
    /// `now`, then removes client files last seen before `cutoff` (devices away longer than
    /// the history horizon, and identities handed out to binds never seen again). Returns how
    /// many it removed.
    func expireClientFiles(lastSeenBefore cutoff: Date, bound: [Int64], now: Date) async throws -> Int
}
