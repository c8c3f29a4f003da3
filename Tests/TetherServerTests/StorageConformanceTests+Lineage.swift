import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The store lineage both storages keep per client file (docs/sync-model.md "Store lineage"):
/// the upload salt written in the integration's transaction, the confirmed version only
/// raised, both copied by a snapshot and put back by a restore.
extension StorageConformanceTests {
    @Test(arguments: StorageBackend.allCases)
    func theLineageIsKeptWithTheIntegration(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            var record = try #require(try await storage.clientFile(a.id, of: partition))
            #expect(record.integratedSalt == 0 && record.confirmedVersion == 0)
            _ = try await storage.integrate(
                [upload(1, 3, .insert("orders", .text("o1"), ["total": .real(1)]))], from: a.id, uploadSalt: 77, into: partition, now: now)
            // A re-send integrates nothing and leaves the salt of the last integration.
            _ = try await storage.integrate(
                [upload(1, 3, .insert("orders", .text("o1"), ["total": .real(1)]))], from: a.id, uploadSalt: 88, into: partition, now: now)
            record = try #require(try await storage.clientFile(a.id, of: partition))
            #expect(record.integratedSeq == 3 && record.integratedSalt == 77)
            try await storage.touchClientFile(a.id, of: partition, now: now, confirmedVersion: 5)
            try await storage.touchClientFile(a.id, of: partition, now: now, confirmedVersion: 2)
            #expect(try await storage.clientFile(a.id, of: partition)?.confirmedVersion == 5, "never lowered")
            let snapshot = try await storage.snapshot(of: partition, now: now)
            _ = try await storage.integrate(
                [upload(4, 4, .insert("orders", .text("o2"), ["total": .real(2)]))], from: a.id, uploadSalt: 99, into: partition, now: now)
            try await storage.touchClientFile(a.id, of: partition, now: now, confirmedVersion: 9)
            _ = try await storage.restore(partition, to: snapshot.id)
            record = try #require(try await storage.clientFile(a.id, of: partition))
            #expect(record.integratedSeq == 3 && record.integratedSalt == 77 && record.confirmedVersion == 5)
        }
    }
}
