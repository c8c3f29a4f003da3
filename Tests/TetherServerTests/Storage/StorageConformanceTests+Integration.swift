import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// ``IntegrationStorage``, the same on both storages: uploads applied in server order, once, in
/// gapless versions from two instances at once, a large upload as one batch; the store lineage
/// each client file keeps (docs/sync-model.md "Store lineage").
extension StorageConformanceTests {
    @Test(arguments: StorageBackend.allCases)
    func integrationAppliesServerOrderAndIsIdempotent(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, head) = try await storage.registerClientFile(in: partition, now: now)
            #expect(head == .empty)
            let (b, _) = try await storage.registerClientFile(in: partition, now: now)
            #expect(a.id != b.id)

            var outcome = try await storage.integrate(
                [upload(1, 2, .insert("orders", .text("o1"), ["total": .real(1), "note": .text("a")]))],
                from: a.id, into: partition, now: now)
            #expect(outcome.accepted == 1 && outcome.head.latest.version == 1 && outcome.integratedSeq == 2)
            _ = try await storage.integrate(
                [upload(1, 1, .update("orders", .text("o1"), ["note": .text("b")]))], from: b.id, into: partition, now: now)
            outcome = try await storage.integrate(
                [upload(1, 2, .insert("orders", .text("o1"), ["total": .real(1), "note": .text("a")]))],
                from: a.id, into: partition, now: now)
            #expect(outcome.accepted == 0 && outcome.ignored == 1 && outcome.head.latest.version == 2)
            // One upload touching one row several times: applied in order (batched writes keep the last).
            _ = try await storage.integrate(
                [
                    upload(3, 3, .delete("orders", .text("o1"))),
                    upload(4, 4, .update("orders", .text("o1"), ["total": .real(9)])),
                    upload(5, 5, .insert("orders", .text("o2"), ["total": .real(2), "note": .null])),
                    upload(6, 6, .insert("orders", .text("o2"), ["note": .text("merged")]), .insert("orders", .text("o3"), [:]),
                           .delete("orders", .text("o3"))),
                ], from: a.id, into: partition, now: now)
            #expect(try await state(storage) == ["orders/text(\"o2\")": ["total": .real(2), "note": .text("merged")]])

            let history = try await storage.history(of: partition, after: 0, maxEntries: 100, maxBytes: 1 << 20)
            #expect(history.map(\.version.version) == [1, 2, 3, 4, 5, 6])
            #expect(Set(history.map(\.version.salt)).count == 6)
            #expect(history.map(\.originFile) == [a.id, b.id, a.id, a.id, a.id, a.id])
            #expect(history.map(\.originSeq) == [2, 1, 3, 4, 5, 6])
            #expect(try history[5].decodedChangeset().changes.count == 3)
            #expect(try await storage.history(of: partition, after: 2, maxEntries: 2, maxBytes: 1 << 20).map(\.version.version) == [3, 4])
            #expect(try await storage.history(of: partition, after: 0, maxEntries: 100, maxBytes: 1).count == 1)
            let firstTwo = try history[0].decodedChangeset().encoded.count + history[1].decodedChangeset().encoded.count
            #expect(try await storage.history(of: partition, after: 0, maxEntries: 100, maxBytes: firstTwo).count == 2)
            #expect(try await storage.history(of: partition, after: 6, maxEntries: 100, maxBytes: 1 << 20).isEmpty)

            let gap = try await storage.integrate(
                [upload(7, 7, .insert("orders", .text("o3"), [:])), UploadChangeset(afterSeq: 9, firstSeq: 10, lastSeq: 10, changeset: Changeset())],
                from: a.id, into: partition, now: now)
            #expect(gap.accepted == 1 && gap.gap == UploadGap(afterSeq: 9, integratedSeq: 7) && gap.integratedSeq == 7)
            #expect(try await storage.integratedSeq(of: a.id, in: partition, atOrBefore: 6) == 6)
            #expect(try await storage.integratedSeq(of: a.id, in: partition, atOrBefore: 2) == 2)
            #expect(try await storage.integratedSeq(of: b.id, in: partition, atOrBefore: 1) == 0)
            #expect(try await storage.integratedSeq(of: 999_999, in: partition, atOrBefore: 1) == 0)
            #expect(try await storage.salt(of: partition, version: 3) == history[2].version.salt)
            #expect(try await storage.salt(of: partition, version: 0) == 0)
            #expect(try await storage.salt(of: partition, version: 8) == nil)
            #expect(try await storage.clientFile(a.id, of: partition)?.integratedSeq == 7)
            #expect(try await storage.clientFile(a.id, of: partition)?.integratedVersion == 7)
            #expect(try await storage.clientFile(a.id, of: PartitionName("store-18")!) == nil)
        }
    }

    /// Two instances upload into one partition at once: versions follow each other without a
    /// gap or a repeat, in the order the history lists them (no sequence: a gap would make a
    /// session skip a version, an out-of-order commit would make it miss one).
    @Test(arguments: StorageBackend.allCases)
    func concurrentUploadsFromTwoInstancesGetGaplessVersions(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, place in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let (b, _) = try await storage.registerClientFile(in: partition, now: now)
            let perFile: Int64 = 25
            try await place.withInstance { other in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (instance, file) in [(storage, a.id), (other, b.id)] {
                        let partition = self.partition, now = self.now
                        group.addTask {
                            for seq in 1...perFile {
                                let outcome = try await instance.integrate(
                                    [UploadChangeset(firstSeq: seq, lastSeq: seq, changeset: Changeset([
                                        .insert("t", .integer(file * 1000 + seq), [:]), .update("counter", .integer(0), ["by": .integer(file)]),
                                    ]))], from: file, into: partition, now: now)
                                #expect(outcome.accepted == 1)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let history = try await storage.history(of: partition, after: 0, maxEntries: 1000, maxBytes: 1 << 30)
            #expect(history.map(\.version.version) == Array(1...(2 * perFile)))
            #expect(history.filter { $0.originFile == a.id }.map(\.originSeq) == Array(1...perFile))
            #expect(history.filter { $0.originFile == b.id }.map(\.originSeq) == Array(1...perFile))
            #expect(try await storage.head(of: partition)?.latest.version == 2 * perFile)
            #expect(try await state(storage).count == Int(2 * perFile))
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aLargeUploadIsOneBatch(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let changesets = (1...20).map { seq in
                UploadChangeset(firstSeq: Int64(seq), lastSeq: Int64(seq), changeset: Changeset((0..<500).map { row in
                    RowChange.insert("t", .integer(Int64(row)), ["v": .integer(Int64(seq)), "blob": .blob(Array(repeating: UInt8(seq), count: 64))])
                }))
            }
            let outcome = try await storage.integrate(changesets, from: a.id, into: partition, now: now)
            #expect(outcome.accepted == 20 && outcome.head.latest.version == 20)
            let rows = try await state(storage)
            #expect(rows.count == 500 && rows.values.allSatisfy { $0["v"] == .integer(20) })
        }
    }

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
