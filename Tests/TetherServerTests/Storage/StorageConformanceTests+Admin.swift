import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// ``AdminStorage``, the same on both storages: restores (rolling back state, history and client
/// files; after compaction; forward again), terminate-sync, the snapshots listed.
extension StorageConformanceTests {
    @Test(arguments: StorageBackend.allCases)
    func restoreRollsBackStateHistoryAndClientFilesWithFreshSalts(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate([upload(1, 1, .insert("t", .integer(1), [:]))], from: a.id, into: partition, now: now)
            let snapshot = try await storage.snapshot(of: partition, now: now)
            #expect(snapshot.version == 1 && snapshot.partition == "store-17")
            let (late, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate([upload(2, 2, .insert("t", .integer(2), [:]))], from: a.id, into: partition, now: now)
            let oldSalt = try await storage.salt(of: partition, version: 2)
            let snapshotSalt = try await storage.salt(of: partition, version: 1)

            let head = try await storage.restore(partition, to: snapshot.id)
            #expect(head.latest.version == 1 && head.latest.salt == snapshotSalt)
            #expect(try await storage.head(of: partition) == head)
            #expect(try await state(storage).keys.sorted() == ["t/integer(1)"])
            #expect(try await storage.clientFile(late.id, of: partition) == nil)
            #expect(try await storage.clientFile(a.id, of: partition)?.integratedSeq == 1)
            #expect(try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20).count == 1)
            _ = try await storage.integrate([upload(2, 2, .insert("t", .integer(3), [:]))], from: a.id, into: partition, now: now)
            let newSalt = try await storage.salt(of: partition, version: 2)
            #expect(newSalt != nil && newSalt != oldSalt)
            // A client file registered after the restore never takes an id handed out before it.
            let (fresh, _) = try await storage.registerClientFile(in: partition, now: now)
            #expect(fresh.id > late.id)

            await #expect(throws: StorageError.self) { try await storage.restore(partition, to: "nope") }
            await #expect(throws: StorageError.self) { try await storage.restore(PartitionName("store-18")!, to: snapshot.id) }
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func restoreAfterCompactionPastTheSnapshot(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate([upload(1, 1, .insert("t", .integer(1), [:]))], from: a.id, into: partition, now: now)
            let snapshot = try await storage.snapshot(of: partition, now: now)
            for seq in Int64(2)...3 {
                _ = try await storage.integrate(
                    [upload(seq, seq, .insert("t", .integer(seq), [:]))], from: a.id, into: partition, now: now.addingTimeInterval(Double(seq) * 100))
            }
            _ = try await storage.compact(olderThan: now.addingTimeInterval(250))
            #expect(try await storage.head(of: partition)?.base.version == 2)
            let head = try await storage.restore(partition, to: snapshot.id)
            #expect(head.latest.version == 1 && head.base == head.latest)
            #expect(try await storage.salt(of: partition, version: 1) == head.latest.salt)
        }
    }

    /// Issue 22's forward restore: back to an early snapshot, new uploads, then forward to a
    /// snapshot of the abandoned lineage. The head and the retained history stay consistent.
    @Test(arguments: StorageBackend.allCases)
    func aForwardRestoreKeepsHeadAndHistoryConsistent(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate([upload(1, 1, .insert("t", .integer(1), [:]))], from: a.id, into: partition, now: now)
            let early = try await storage.snapshot(of: partition, now: now)
            for seq in Int64(2)...3 {
                _ = try await storage.integrate([upload(seq, seq, .insert("t", .integer(seq), [:]))], from: a.id, into: partition, now: now)
            }
            let late = try await storage.snapshot(of: partition, now: now)
            let lateSalt = try await storage.head(of: partition)?.latest.salt
            _ = try await storage.restore(partition, to: early.id)
            _ = try await storage.integrate([upload(2, 2, .insert("t", .integer(20), [:]))], from: a.id, into: partition, now: now)
            #expect(try await storage.historyProblems(of: partition).isEmpty)
            let head = try await storage.restore(partition, to: late.id)
            #expect(head.latest.version == 3 && head.latest.salt == lateSalt && head.base == head.latest)
            #expect(try await storage.historyProblems(of: partition).isEmpty)
            #expect(try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20).isEmpty)
            #expect(try await storage.salt(of: partition, version: 3) == lateSalt)
            #expect(try await state(storage).keys.sorted() == ["t/integer(1)", "t/integer(2)", "t/integer(3)"])
            #expect(try await storage.repairHistories().isEmpty)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func terminateForgetsEveryClientFileAndFlagsPersist(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, place in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.registerClientFile(in: PartitionName("store-18")!, now: now)
            #expect(try await storage.flags() == ServerFlags())
            try await storage.touchClientFile(a.id, of: partition, now: now.addingTimeInterval(60), confirmedVersion: 0)
            #expect(try await storage.forgottenClientFileLastSeen(a.id, of: partition) == nil, "not forgotten yet")
            #expect(try await storage.terminateSync() == 2)
            #expect(try await storage.clientFile(a.id, of: partition) == nil)
            // When it last bound stays known to the heal detection, for its partition only.
            #expect(try await storage.forgottenClientFileLastSeen(a.id, of: partition) == now.addingTimeInterval(60))
            #expect(try await storage.forgottenClientFileLastSeen(a.id, of: PartitionName("store-18")!) == nil)
            #expect(try await storage.flags().syncTerminated)
            var flags = try await storage.flags()
            flags.syncTerminated = false
            flags.recoveryOverride = false
            flags.recoveryOverrideConfigValue = true
            try await storage.setFlags(flags)
            let written = flags
            try await place.withInstance { reopened in
                #expect(try await reopened.flags() == written)
                // Ids are never reused, even after every client file was forgotten.
                let (b, _) = try await reopened.registerClientFile(in: partition, now: now)
                #expect(b.id > a.id)
            }
        }
    }

    /// The console lists a partition's snapshots, newest first, and none of another's.
    @Test(arguments: StorageBackend.allCases)
    func snapshotsAreListedNewestFirst(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            #expect(try await storage.snapshots(of: partition).isEmpty)
            let first = try await storage.snapshot(of: partition, now: now.addingTimeInterval(-60))
            let second = try await storage.snapshot(of: partition, now: now)
            _ = try await storage.snapshot(of: PartitionName("other-1")!, now: now)
            #expect(try await storage.snapshots(of: partition).map(\.id) == [second.id, first.id])
            #expect(try await storage.snapshots(of: partition).first?.createdAt == now)
        }
    }
}
