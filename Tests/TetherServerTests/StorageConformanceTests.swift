import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// What every ``ServerStorage`` must do, run against SQLite and against a real PostgreSQL 15:
/// the sync server's logic above the storage cannot tell them apart.
@Suite(.postgresCluster) struct StorageConformanceTests {
    let partition = PartitionName("store-17")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func upload(_ first: Int64, _ last: Int64, _ changes: RowChange...) -> UploadChangeset {
        UploadChangeset(firstSeq: first, lastSeq: last, changeset: Changeset(changes))
    }

    func state(_ storage: any ServerStorage, of partition: PartitionName? = nil) async throws -> [String: [String: FieldValue]] {
        let reader = try await storage.openState(of: partition ?? self.partition)
        var rows: [String: [String: FieldValue]] = [:]
        while true {
            let chunk = try await reader.next(maxRows: 2, maxBytes: 1 << 20)
            if chunk.isEmpty { break }
            for change in chunk { rows["\(change.table)/\(keyText(change.key))"] = change.fields }
        }
        await reader.close()
        return rows
    }

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

    @Test(arguments: StorageBackend.allCases)
    func terminateForgetsEveryClientFileAndFlagsPersist(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, place in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.registerClientFile(in: PartitionName("store-18")!, now: now)
            #expect(try await storage.flags() == ServerFlags())
            #expect(try await storage.terminateSync() == 2)
            #expect(try await storage.clientFile(a.id, of: partition) == nil)
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

    @Test(arguments: StorageBackend.allCases)
    func schemaHistoryAndBreakingMigration(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let v1 = Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
                ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "a", type: .text), ColumnSchema(name: "gone", type: .text),
            ])])
            let v2 = Schema(version: 2, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
                ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "a", type: .integer), ColumnSchema(name: "b", type: .real),
            ])])
            try await storage.appendSchema(SchemaRecord(schema: v1, isBreaking: false, appliedAt: now), migration: nil)
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate(
                [upload(1, 1, .insert("t", .integer(1), ["a": .text("x"), "gone": .text("y")]), .insert("old", .integer(1), [:]))],
                from: a.id, into: partition, now: now)
            try await storage.appendSchema(SchemaRecord(schema: v2, isBreaking: true, appliedAt: now), migration: StateMigration(from: v1, to: v2))
            let history = try await storage.schemaHistory()
            #expect(history.map(\.version) == [1, 2] && history.map(\.isBreaking) == [false, true])
            #expect(history.last?.schema == v2 && history.last?.appliedAt == now)
            #expect(try await state(storage) == ["t/integer(1)": ["a": .integer(0), "b": .real(0)]])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aBreakingMigrationKeepsPartitionsAndSnapshotsApart(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let v1 = Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
                ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "keep", type: .text), ColumnSchema(name: "gone", type: .text),
            ])])
            let v2 = Schema(version: 2, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
                ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "keep", type: .text),
            ])])
            try await storage.appendSchema(SchemaRecord(schema: v1, isBreaking: false, appliedAt: now), migration: nil)
            let other = PartitionName("store-18")!
            for (p, value) in [(partition, "one"), (other, "two")] {
                let (file, _) = try await storage.registerClientFile(in: p, now: now)
                _ = try await storage.integrate(
                    [upload(1, 1, .insert("t", .integer(1), ["keep": .text(value), "gone": .text("x")]))], from: file.id, into: p, now: now)
            }
            let snapshot = try await storage.snapshot(of: partition, now: now)
            try await storage.appendSchema(SchemaRecord(schema: v2, isBreaking: true, appliedAt: now), migration: StateMigration(from: v1, to: v2))
            #expect(try await state(storage) == ["t/integer(1)": ["keep": .text("one")]])
            #expect(try await state(storage, of: other) == ["t/integer(1)": ["keep": .text("two")]])
            // The snapshot's state was migrated too: a restore gives rows that fit the new schema.
            _ = try await storage.restore(partition, to: snapshot.id)
            #expect(try await state(storage) == ["t/integer(1)": ["keep": .text("one")]])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func runtimeGrantsPersist(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, place in
            let pattern = try GrantPattern.parse("catalog-*").get()
            try await storage.setRuntimeGrant(RuntimeGrant(user: "pos", pattern: pattern, access: .read))
            try await storage.setRuntimeGrant(RuntimeGrant(user: "pos", pattern: pattern, access: nil))
            try await storage.setRuntimeGrant(RuntimeGrant(user: "all", pattern: try GrantPattern.parse("*").get(), access: .readwrite))
            let expected = [
                RuntimeGrant(user: "all", pattern: try GrantPattern.parse("*").get(), access: .readwrite),
                RuntimeGrant(user: "pos", pattern: pattern, access: nil),
            ]
            #expect(try await storage.runtimeGrants() == expected)
            let stored = try await place.withInstance { reopened in try await reopened.runtimeGrants() }
            #expect(stored == expected)
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
}
