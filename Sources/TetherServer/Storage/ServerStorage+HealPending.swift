import Foundation
public import TetherProtocol

// TEMPORARY while healing is being built (issue 34): the storages implement these; this file
// goes when they do.
extension ServerStorage {
    public func restore(_ partition: PartitionName, to snapshot: String, mode: RestoreMode, now: Date) async throws -> (PartitionHead, HealRecord?) {
        (try await restore(partition, to: snapshot), nil)
    }
    public func openHeal(_ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date) async throws -> HealRecord {
        throw StorageError.unavailable("healing is not built yet")
    }
    public func noteLostVersion(_ version: Int64, of partition: PartitionName) async throws {}
    public func heal(of partition: PartitionName) async throws -> HealRecord? { nil }
    public func heals() async throws -> [HealRecord] { [] }
    public func contributeHeal(_ chunk: HealChunk, into partition: PartitionName, now: Date, epoch: Int64) async throws -> HealReply {
        HealReply(session: chunk.session, contribution: chunk.contribution, outcome: .notWanted, healedChanges: 0, reason: "healing is not built yet")
    }
    public func closeHeal(_ partition: PartitionName, now: Date) async throws -> HealRecord {
        throw StorageError.notFound("heal of partition \(partition)")
    }
}
