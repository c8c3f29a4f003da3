import Foundation
import TetherProtocol
@testable import TetherServer

/// A storage that forwards to `base` and, once ``pauseNextRegistration()`` was called, stops
/// in the next `registerClientFile` (after it ran) until ``resume()``: a test can act in the
/// gap between a bind's storage work and the registration of its session. Heal chunks are
/// answered by ``answerHeals(_:)``'s closure when one is set.
final class PausingStorage: ServerStorage, @unchecked Sendable {
    let base: any ServerStorage
    private let lock = NSLock()
    private var armed = false
    private let (reachedStream, reached) = AsyncStream<Void>.makeStream()
    private let (resumeStream, resumer) = AsyncStream<Void>.makeStream()

    init(_ base: any ServerStorage) { self.base = base }

    func pauseNextRegistration() { lock.withLock { armed = true } }

    /// Waits until a paused registration has run.
    func waitUntilPaused() async {
        var iterator = reachedStream.makeAsyncIterator()
        _ = await iterator.next()
    }

    func resume() { resumer.yield() }

    private var healAnswer: (@Sendable (HealChunk) throws -> HealReply)?

    /// Answers every later heal chunk with `answer` instead of the base storage.
    func answerHeals(_ answer: @escaping @Sendable (HealChunk) throws -> HealReply) { lock.withLock { healAnswer = answer } }

    func contributeHeal(_ chunk: HealChunk, into partition: PartitionName, now: Date, epoch: Int64) async throws -> HealReply {
        if let answer = lock.withLock({ healAnswer }) { return try answer(chunk) }
        return try await base.contributeHeal(chunk, into: partition, now: now, epoch: epoch)
    }

    func registerClientFile(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead) {
        let result = try await base.registerClientFile(in: partition, now: now)
        let pause = lock.withLock { () -> Bool in
            defer { armed = false }
            return armed
        }
        if pause {
            reached.yield()
            var iterator = resumeStream.makeAsyncIterator()
            _ = await iterator.next()
        }
        return result
    }

    // Everything else is forwarded.
    func flags() async throws -> ServerFlags { try await base.flags() }
    func setFlags(_ flags: ServerFlags) async throws { try await base.setFlags(flags) }
    func terminateSync() async throws -> Int { try await base.terminateSync() }
    func schemaHistory() async throws -> [SchemaRecord] { try await base.schemaHistory() }
    func appendSchema(_ record: SchemaRecord, migration: StateMigration?) async throws {
        try await base.appendSchema(record, migration: migration)
    }
    func runtimeGrants() async throws -> [RuntimeGrant] { try await base.runtimeGrants() }
    func setRuntimeGrant(_ grant: RuntimeGrant) async throws { try await base.setRuntimeGrant(grant) }
    func head(of partition: PartitionName) async throws -> PartitionHead? { try await base.head(of: partition) }
    func salt(of partition: PartitionName, version: Int64) async throws -> Int64? { try await base.salt(of: partition, version: version) }
    func clientFile(_ id: Int64, of partition: PartitionName) async throws -> ClientFileRecord? {
        try await base.clientFile(id, of: partition)
    }
    func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date, confirmedVersion: Int64) async throws {
        try await base.touchClientFile(id, of: partition, now: now, confirmedVersion: confirmedVersion)
    }
    func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date
    ) async throws -> IntegrationOutcome {
        try await base.integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now)
    }
    func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int) async throws -> [HistoryEntry] {
        try await base.history(of: partition, after: version, maxEntries: maxEntries, maxBytes: maxBytes)
    }
    func integratedSeq(of clientFile: Int64, in partition: PartitionName, atOrBefore version: Int64) async throws -> Int64 {
        try await base.integratedSeq(of: clientFile, in: partition, atOrBefore: version)
    }
    func openState(of partition: PartitionName) async throws -> any StateReader { try await base.openState(of: partition) }
    func snapshot(of partition: PartitionName, now: Date) async throws -> SnapshotRecord { try await base.snapshot(of: partition, now: now) }
    func restore(_ partition: PartitionName, to snapshot: String, mode: RestoreMode, now: Date) async throws -> (PartitionHead, HealRecord?) {
        try await base.restore(partition, to: snapshot, mode: mode, now: now)
    }
    func openHeal(_ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date) async throws -> HealRecord {
        try await base.openHeal(partition, window: window, mode: mode, origin: origin, now: now)
    }
    func noteLostVersion(_ version: Int64, of partition: PartitionName) async throws {
        try await base.noteLostVersion(version, of: partition)
    }
    func heal(of partition: PartitionName) async throws -> HealRecord? { try await base.heal(of: partition) }
    func lostSalt(of partition: PartitionName, version: Int64) async throws -> Int64? {
        try await base.lostSalt(of: partition, version: version)
    }

    func heals() async throws -> [HealRecord] { try await base.heals() }
    func closeHeal(_ partition: PartitionName, now: Date) async throws -> HealRecord { try await base.closeHeal(partition, now: now) }
    func compact(olderThan cutoff: Date) async throws -> CompactionReport { try await base.compact(olderThan: cutoff) }
    func partitions() async throws -> [PartitionStatistics] { try await base.partitions() }
    func latestVersions() async throws -> [String: Int64] { try await base.latestVersions() }
    func expireClientFiles(lastSeenBefore cutoff: Date, bound: [Int64], now: Date) async throws -> Int {
        try await base.expireClientFiles(lastSeenBefore: cutoff, bound: bound, now: now)
    }
    func repairHistories() async throws -> [HistoryRepair] { try await base.repairHistories() }
    func snapshots(of partition: PartitionName) async throws -> [SnapshotRecord] { try await base.snapshots(of: partition) }
    func recordDeviceReports(_ entries: [DeviceLedgerEntry]) async throws { try await base.recordDeviceReports(entries) }
    func admitDeviceReport(
        _ entries: [DeviceLedgerEntry], granted: Set<String>, limits: DeviceLedgerIntake.Limits
    ) async throws -> DeviceLedgerIntake.Outcome {
        try await base.admitDeviceReport(entries, granted: granted, limits: limits)
    }
    func devices(_ query: DeviceQuery) async throws -> [DeviceLedgerEntry] { try await base.devices(query) }
    func deviceCounts(staleBefore: Date, wedgedBefore: Date) async throws -> DeviceCounts {
        try await base.deviceCounts(staleBefore: staleBefore, wedgedBefore: wedgedBefore)
    }
    func expireDevices(reportedBefore cutoff: Date, maxEntries: Int) async throws -> Int {
        try await base.expireDevices(reportedBefore: cutoff, maxEntries: maxEntries)
    }
    func historyProblems(of partition: PartitionName) async throws -> [String] { try await base.historyProblems(of: partition) }
    func backup(to path: String) async throws { try await base.backup(to: path) }
    func close() async throws { try await base.close() }
}
