import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// Client-file expiry and the latest-versions summary, the same on both storages.
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
}
