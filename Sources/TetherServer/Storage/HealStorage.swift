import Foundation
import TetherProtocol

/// Healing from the fleet (docs/client-reset.md, "Healing a restored server"): the heal
/// records a restore (``AdminStorage/restore(_:to:mode:now:)``) or a device bound ahead of the
/// history opens, the devices' contributions, and the operator's `heal-done`. ``SyncService``
/// (devices ahead, heal chunks) and ``ServerControl`` (status, heal-done) hold it.
package protocol HealStorage: Sendable {
    /// Opens (or replaces) the partition's heal record for `window`; used when a device binds
    /// ahead of the history. Returns the record now stored.
    func openHeal(_ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date) async throws -> HealRecord
    /// Raises an open record's ``HealRecord/lostUntil`` to `version` when a device reports a
    /// higher lost version than known (windows the server did not know).
    func noteLostVersion(_ version: Int64, of partition: PartitionName) async throws
    /// The partition's heal record, open or closed; nil when it has none.
    func heal(of partition: PartitionName) async throws -> HealRecord?
    /// The salt the partition's heal record lists for the lost version `version`
    /// (`heal_window`); nil when it lists none.
    func lostSalt(of partition: PartitionName, version: Int64) async throws -> Int64?
    /// Whether some restore of this database — the current heal record's or an earlier one's —
    /// lost the partition's version `version` issued with `salt` (`restored_away`, kept when a
    /// later restore replaces the record or a heal is closed).
    func lostByARestore(of partition: PartitionName, version: Int64, salt: Int64) async throws -> Bool
    /// When a client file `terminateSync` forgot last bound (`forgotten_client_files`); nil
    /// when it was never forgotten. The store of a device that bound after a heal record opened
    /// is on the history written since: ``HealDetection`` must know so even when the server
    /// forgot the store's identity meanwhile.
    func forgottenClientFileLastSeen(_ id: Int64, of partition: PartitionName) async throws -> Date?
    /// Every partition's heal record.
    func heals() async throws -> [HealRecord]
    /// Applies one chunk of a device's contribution, in one transaction with the history
    /// (a healed change is an ordinary history entry of origin 0), and answers it.
    func contributeHeal(_ chunk: HealChunk, into partition: PartitionName, now: Date, epoch: Int64) async throws -> HealReply
    /// Closes the partition's heal (`admin heal-done`): later devices reset as after a rollback.
    /// Returns the closed record; throws ``StorageError/notFound`` when none is open.
    func closeHeal(_ partition: PartitionName, now: Date) async throws -> HealRecord
}
