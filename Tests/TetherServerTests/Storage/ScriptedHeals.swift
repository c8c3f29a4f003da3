import Foundation
import TetherProtocol
@testable import TetherServer

/// The heal role of `base`, with heal chunks answered by ``answerHeals(_:)``'s closure once one
/// is set (the chunk never reaches `base` then).
final class ScriptedHeals: HealStorage, @unchecked Sendable {
    let base: any HealStorage
    private let lock = NSLock()
    private var healAnswer: (@Sendable (HealChunk) throws -> HealReply)?

    init(_ base: any HealStorage) { self.base = base }

    /// Answers every later heal chunk with `answer` instead of the base storage.
    func answerHeals(_ answer: @escaping @Sendable (HealChunk) throws -> HealReply) { lock.withLock { healAnswer = answer } }

    func contributeHeal(_ chunk: HealChunk, into partition: PartitionName, now: Date, epoch: Int64) async throws -> HealReply {
        if let answer = lock.withLock({ healAnswer }) { return try answer(chunk) }
        return try await base.contributeHeal(chunk, into: partition, now: now, epoch: epoch)
    }

    // The rest of the role is forwarded.
    func openHeal(_ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date) async throws -> HealRecord {
        try await base.openHeal(partition, window: window, mode: mode, origin: origin, now: now)
    }
    func noteLostVersion(_ version: Int64, of partition: PartitionName) async throws { try await base.noteLostVersion(version, of: partition) }
    func heal(of partition: PartitionName) async throws -> HealRecord? { try await base.heal(of: partition) }
    func lostSalt(of partition: PartitionName, version: Int64) async throws -> Int64? { try await base.lostSalt(of: partition, version: version) }
    func lostByARestore(of partition: PartitionName, version: Int64, salt: Int64) async throws -> Bool {
        try await base.lostByARestore(of: partition, version: version, salt: salt)
    }
    func forgottenClientFileLastSeen(_ id: Int64, of partition: PartitionName) async throws -> Date? {
        try await base.forgottenClientFileLastSeen(id, of: partition)
    }
    func heals() async throws -> [HealRecord] { try await base.heals() }
    func closeHeal(_ partition: PartitionName, now: Date) async throws -> HealRecord { try await base.closeHeal(partition, now: now) }
}
