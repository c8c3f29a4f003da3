import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// ``HistoryReading``, the same on both storages: what a partition never bound reads as, a state
/// reader consistent while uploads commit, and history reads fenced by the epoch.
extension StorageConformanceTests {
    @Test(arguments: StorageBackend.allCases)
    func unknownPartitionsAndClientFiles(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            #expect(try await storage.head(of: partition) == nil)
            #expect(try await storage.salt(of: partition, version: 0) == 0)
            #expect(try await storage.salt(of: partition, version: 1) == nil)
            #expect(try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20).isEmpty)
            let reader = try await storage.openState(of: partition)
            #expect(reader.version == .none && reader.totalRows == 0)
            #expect(try await reader.next(maxRows: 10, maxBytes: 1 << 20).isEmpty)
            await reader.close()
            await #expect(throws: StorageError.self) { _ = try await storage.integrate([], from: 1, into: partition, now: now) }
            _ = try await storage.registerClientFile(in: partition, now: now)
            await #expect(throws: StorageError.self) { _ = try await storage.integrate([], from: 999_999, into: partition, now: now) }
            let later = now.addingTimeInterval(60)
            let (file, _) = try await storage.registerClientFile(in: partition, now: now)
            try await storage.touchClientFile(file.id, of: partition, now: later)
            #expect(try await storage.clientFile(file.id, of: partition)?.lastSeen == later)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func stateReaderIsConsistentWhileUploadsCommit(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, place in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let rows = (0..<50).map { RowChange.insert("items", .integer(Int64($0)), ["n": .integer(Int64($0))]) }
                + [RowChange.insert("a", .text("z"), [:]), RowChange.insert("a", .text("B"), [:])]
            _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: a.id, into: partition, now: now)
            let reader = try await storage.openState(of: partition)
            #expect(reader.version.version == 1 && reader.totalRows == 52 && reader.totalBytes > 0)
            let first = try await reader.next(maxRows: 10, maxBytes: 1 << 20)
            // Another instance over the same storage commits meanwhile.
            try await place.withInstance { other in
                _ = try await other.integrate(
                    [upload(2, 2, .delete("items", .integer(45)), .insert("items", .integer(99), [:]))],
                    from: a.id, into: partition, now: now)
            }
            var all = first
            while true {
                let chunk = try await reader.next(maxRows: 7, maxBytes: 1 << 20)
                if chunk.isEmpty { break }
                all += chunk
            }
            #expect(try await reader.next(maxRows: 7, maxBytes: 1 << 20).isEmpty)
            await reader.close()
            #expect(all.count == 52)
            #expect(Set(all.map(\.key)) == Set((0..<50).map { RowKey.integer(Int64($0)) } + [.text("z"), .text("B")]))
            // Tables in byte order, then keys in their encoded byte order: the same on every backend.
            #expect(all.prefix(2).map(\.key) == [.text("B"), .text("z")])
            let small = try await storage.openState(of: partition)
            #expect(small.version.version == 2)
            #expect(try await small.next(maxRows: 100, maxBytes: 1).count == 1)
            await small.close()
        }
    }

    /// A state larger than one chunk (SQLite reads a small one whole with its version, and a
    /// larger one through a snapshot of its own): still one version from the first chunk to the
    /// last while another instance commits.
    @Test(arguments: StorageBackend.allCases)
    func aStateLargerThanAChunkIsReadAtOneVersion(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, place in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let count = StoredStateRow.maxRowsPerChunk + 100
            let rows = (0..<count).map { RowChange.insert("items", .integer(Int64($0)), ["n": .integer(Int64($0))]) }
            _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: a.id, into: partition, now: now)
            let reader = try await storage.openState(of: partition)
            #expect(reader.version.version == 1 && reader.totalRows == Int64(count))
            var all = try await reader.next(maxRows: 1000, maxBytes: 1 << 20)
            try await place.withInstance { other in
                _ = try await other.integrate(
                    [upload(2, 2, .delete("items", .integer(Int64(count - 1))), .insert("items", .integer(-1), [:]))],
                    from: a.id, into: partition, now: now)
            }
            while true {
                let chunk = try await reader.next(maxRows: 1000, maxBytes: 1 << 20)
                if chunk.isEmpty { break }
                all += chunk
            }
            await reader.close()
            #expect(all.count == count)
            #expect(Set(all.map(\.key)) == Set((0..<count).map { RowKey.integer(Int64($0)) }))
            let after = try await storage.openState(of: partition)
            #expect(after.version.version == 2 && after.totalRows == Int64(count))
            await after.close()
        }
    }

    /// PostgreSQL fences sessions bound before a restore (another instance may not have told
    /// them yet); SQLite has no epochs: the restoring process ends its own sessions itself.
    @Test(arguments: StorageBackend.allCases)
    func aRestoreFencesWhatSessionsBoundBeforeItDo(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let bound = try await storage.epoch(of: partition)
            _ = try await storage.integrate([upload(1, 1, .insert("t", .integer(1), [:]))], from: a.id, into: partition, now: now, epoch: bound)
            let snapshot = try await storage.snapshot(of: partition, now: now)
            #expect(try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20, epoch: bound).count == 1)
            _ = try await storage.restore(partition, to: snapshot.id)
            let after = try await storage.epoch(of: partition)
            // A new device's registration reads the epoch in its own transaction: the restored one.
            #expect(try await storage.registerClientFileWithEpoch(in: partition, now: now).epoch == after)
            switch backend {
            case .sqlite:
                #expect(after == 0 && bound == 0)
            case .postgresql:
                #expect(after == bound + 1)
                await #expect(throws: StorageError.self) {
                    _ = try await storage.integrate([upload(2, 2, .insert("t", .integer(2), [:]))], from: a.id, into: partition, now: now, epoch: bound)
                }
                await #expect(throws: StorageError.self) {
                    _ = try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20, epoch: bound)
                }
                // Nothing was integrated by the fenced upload; a session bound now goes on.
                #expect(try await storage.head(of: partition)?.latest.version == 1)
                let outcome = try await storage.integrate(
                    [upload(2, 2, .insert("t", .integer(2), [:]))], from: a.id, into: partition, now: now, epoch: after)
                #expect(outcome.accepted == 1)
            }
            #expect(try await storage.epoch(of: PartitionName("never-bound")!) == 0)
        }
    }
}
