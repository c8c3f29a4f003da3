import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// ``HousekeepingStorage``, the same on both storages: compaction, client-file expiry and the
/// latest-versions summary (the history repair: ``HistoryInvariantTests``).
extension StorageConformanceTests {
    @Test(arguments: StorageBackend.allCases)
    func clientFilesNotSeenSinceTheCutoffExpireUnlessBound(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let old = now.addingTimeInterval(-40 * 86400)
            let (gone, _) = try await storage.registerClientFile(in: partition, now: old)
            let (bound, _) = try await storage.registerClientFile(in: partition, now: old)
            let (recent, _) = try await storage.registerClientFile(in: partition, now: now)
            let removed = try await storage.expireClientFiles(
                lastSeenBefore: now.addingTimeInterval(-30 * 86400), bound: [bound.id], now: now)
            #expect(removed == 1)
            #expect(try await storage.clientFile(gone.id, of: partition) == nil)
            #expect(try await storage.clientFile(bound.id, of: partition)?.lastSeen == now, "marked seen")
            #expect(try await storage.clientFile(recent.id, of: partition) != nil)
            #expect(try await storage.expireClientFiles(lastSeenBefore: now.addingTimeInterval(-30 * 86400), bound: [], now: now) == 0)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func latestVersionsNameEveryPartition(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            #expect(try await storage.latestVersions().isEmpty)
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.registerClientFile(in: PartitionName("other-1")!, now: now)
            _ = try await storage.integrate(
                [upload(1, 2, .insert("orders", .text("o1"), ["total": .real(1)]))], from: a.id, into: partition, now: now)
            #expect(try await storage.latestVersions() == [partition.rawValue: 1, "other-1": 0])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func compactionMovesTheBase(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            for seq in Int64(1)...3 {
                _ = try await storage.integrate(
                    [upload(seq, seq, .insert("t", .integer(seq), [:]))], from: a.id, into: partition,
                    now: now.addingTimeInterval(Double(seq) * 100))
            }
            #expect(try await storage.compact(olderThan: now).partitions.isEmpty)
            let report = try await storage.compact(olderThan: now.addingTimeInterval(250))
            #expect(report.partitions == ["store-17": 2] && report.removedEntries == 2)
            let head = try await storage.head(of: partition)
            #expect(head?.base.version == 2 && head?.latest.version == 3)
            #expect(try await storage.salt(of: partition, version: 1) == nil)
            #expect(try await storage.salt(of: partition, version: 2) == head?.base.salt)
            #expect(try await storage.history(of: partition, after: 2, maxEntries: 10, maxBytes: 1 << 20).count == 1)
            let status = try await storage.partitions()
            #expect(status.map(\.name) == ["store-17"])
            #expect(status.first?.historyEntries == 1 && status.first?.rows == 3 && status.first?.clientFiles == 1)
            #expect(status.first?.head == head && (status.first?.historyBytes ?? 0) > 0)
        }
    }
}
