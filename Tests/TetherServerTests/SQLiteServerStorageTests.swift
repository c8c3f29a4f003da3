import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

@Suite struct SQLiteServerStorageTests {
    let partition = PartitionName("store-17")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func withStorage(_ body: (SQLiteServerStorage, TemporaryDirectory) async throws -> Void) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = try SQLiteServerStorage(directory: dir.path)
        try await body(storage, dir)
        try await storage.close()
    }

    func upload(_ first: Int64, _ last: Int64, _ changes: RowChange...) -> UploadChangeset {
        UploadChangeset(firstSeq: first, lastSeq: last, changeset: Changeset(changes))
    }

    func state(_ storage: SQLiteServerStorage, of partition: PartitionName? = nil) async throws -> [String: [String: FieldValue]] {
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

    @Test func integrationAppliesServerOrderAndIsIdempotent() async throws {
        try await withStorage { storage, _ in
            let (a, head) = try await storage.registerClientFile(in: partition, now: now)
            #expect(head == .empty)
            let (b, _) = try await storage.registerClientFile(in: partition, now: now)
            #expect(a.id != b.id)

            var outcome = try await storage.integrate(
                [upload(1, 2, .insert("orders", .text("o1"), ["total": .real(1), "note": .text("a")]))],
                from: a.id, into: partition, now: now)
            #expect(outcome.accepted == 1 && outcome.head.latest.version == 1 && outcome.integratedSeq == 2)
            // B updates one field, then A re-sends its upload (crash before the ack): ignored.
            _ = try await storage.integrate(
                [upload(1, 1, .update("orders", .text("o1"), ["note": .text("b")]))], from: b.id, into: partition, now: now)
            outcome = try await storage.integrate(
                [upload(1, 2, .insert("orders", .text("o1"), ["total": .real(1), "note": .text("a")]))],
                from: a.id, into: partition, now: now)
            #expect(outcome.accepted == 0 && outcome.ignored == 1 && outcome.head.latest.version == 2)
            // An update of a deleted row is ignored; an insert of an existing key merges.
            _ = try await storage.integrate(
                [
                    upload(3, 3, .delete("orders", .text("o1"))),
                    upload(4, 4, .update("orders", .text("o1"), ["total": .real(9)])),
                    upload(5, 5, .insert("orders", .text("o2"), ["total": .real(2), "note": .null])),
                    upload(6, 6, .insert("orders", .text("o2"), ["note": .text("merged")])),
                ], from: a.id, into: partition, now: now)
            #expect(try await state(storage) == ["orders/text(\"o2\")": ["total": .real(2), "note": .text("merged")]])

            let history = try await storage.history(of: partition, after: 0, maxEntries: 100, maxBytes: 1 << 20)
            #expect(history.map(\.version.version) == [1, 2, 3, 4, 5, 6])
            #expect(Set(history.map(\.version.salt)).count == 6)
            #expect(history.map(\.originFile) == [a.id, b.id, a.id, a.id, a.id, a.id])
            let paged = try await storage.history(of: partition, after: 2, maxEntries: 2, maxBytes: 1 << 20)
            #expect(paged.map(\.version.version) == [3, 4])
            let byBytes = try await storage.history(of: partition, after: 0, maxEntries: 100, maxBytes: 1)
            #expect(byBytes.count == 1)

            // A batch that does not follow the integrated seq (an earlier one was lost) stops the upload.
            let gap = try await storage.integrate(
                [upload(7, 7, .insert("orders", .text("o3"), [:])), UploadChangeset(afterSeq: 9, firstSeq: 10, lastSeq: 10, changeset: Changeset())],
                from: a.id, into: partition, now: now)
            #expect(gap.accepted == 1 && gap.gap == UploadGap(afterSeq: 9, integratedSeq: 7) && gap.integratedSeq == 7)
            #expect(try await storage.integratedSeq(of: a.id, in: partition, atOrBefore: 6) == 6)
            #expect(try await storage.integratedSeq(of: a.id, in: partition, atOrBefore: 2) == 2)
            #expect(try await storage.integratedSeq(of: b.id, in: partition, atOrBefore: 1) == 0)
            #expect(try await storage.salt(of: partition, version: 3) == history[2].version.salt)
            #expect(try await storage.salt(of: partition, version: 0) == 0)
            #expect(try await storage.salt(of: partition, version: 8) == nil)
        }
    }

    @Test func stateReaderIsConsistentWhileUploadsCommit() async throws {
        try await withStorage { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let rows = (0..<50).map { RowChange.insert("items", .integer(Int64($0)), ["n": .integer(Int64($0))]) }
            _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: a.id, into: partition, now: now)
            let reader = try await storage.openState(of: partition)
            #expect(reader.version.version == 1 && reader.totalRows == 50)
            let first = try await reader.next(maxRows: 10, maxBytes: 1 << 20)
            _ = try await storage.integrate(
                [upload(2, 2, .delete("items", .integer(45)), .insert("items", .integer(99), [:]))],
                from: a.id, into: partition, now: now)
            var all = first
            while true {
                let chunk = try await reader.next(maxRows: 7, maxBytes: 1 << 20)
                if chunk.isEmpty { break }
                all += chunk
            }
            await reader.close()
            #expect(all.count == 50)
            #expect(Set(all.map(\.key)) == Set((0..<50).map { RowKey.integer(Int64($0)) }))
        }
    }

    @Test func restoreRollsBackStateHistoryAndClientFilesWithFreshSalts() async throws {
        try await withStorage { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate([upload(1, 1, .insert("t", .integer(1), [:]))], from: a.id, into: partition, now: now)
            let snapshot = try await storage.snapshot(of: partition, now: now)
            #expect(snapshot.version == 1)
            let (late, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate([upload(2, 2, .insert("t", .integer(2), [:]))], from: a.id, into: partition, now: now)
            let oldSalt = try await storage.salt(of: partition, version: 2)

            let head = try await storage.restore(partition, to: snapshot.id)
            #expect(head.latest.version == 1)
            #expect(try await state(storage).keys.sorted() == ["t/integer(1)"])
            #expect(try await storage.clientFile(late.id, of: partition) == nil)
            #expect(try await storage.clientFile(a.id, of: partition)?.integratedSeq == 1)
            _ = try await storage.integrate([upload(2, 2, .insert("t", .integer(3), [:]))], from: a.id, into: partition, now: now)
            let newSalt = try await storage.salt(of: partition, version: 2)
            #expect(newSalt != nil && newSalt != oldSalt)

            await #expect(throws: StorageError.self) { try await storage.restore(partition, to: "nope") }
        }
    }

    @Test func compactionMovesTheBase() async throws {
        try await withStorage { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            for seq in Int64(1)...3 {
                _ = try await storage.integrate(
                    [upload(seq, seq, .insert("t", .integer(seq), [:]))], from: a.id, into: partition,
                    now: now.addingTimeInterval(Double(seq) * 100))
            }
            let report = try await storage.compact(olderThan: now.addingTimeInterval(250))
            #expect(report.partitions == ["store-17": 2])
            let head = try await storage.head(of: partition)
            #expect(head?.base.version == 2 && head?.latest.version == 3)
            #expect(try await storage.salt(of: partition, version: 1) == nil)
            #expect(try await storage.salt(of: partition, version: 2) == head?.base.salt)
            #expect(try await storage.history(of: partition, after: 2, maxEntries: 10, maxBytes: 1 << 20).count == 1)
        }
    }

    @Test func terminateForgetsEveryClientFileAndFlagsPersist() async throws {
        try await withStorage { storage, dir in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            #expect(try await storage.terminateSync() == 1)
            #expect(try await storage.clientFile(a.id, of: partition) == nil)
            #expect(try await storage.flags().syncTerminated)
            var flags = try await storage.flags()
            flags.syncTerminated = false
            flags.recoveryOverride = false
            flags.recoveryOverrideConfigValue = true
            try await storage.setFlags(flags)
            try await storage.close()
            let reopened = try SQLiteServerStorage(directory: dir.path)
            #expect(try await reopened.flags() == flags)
            // Ids are never reused, even after every client file was forgotten.
            let (b, _) = try await reopened.registerClientFile(in: partition, now: now)
            #expect(b.id > a.id)
            try await reopened.close()
        }
    }

    @Test func schemaHistoryAndBreakingMigration() async throws {
        try await withStorage { storage, _ in
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
            #expect(try await storage.schemaHistory().map(\.version) == [1, 2])
            #expect(try await state(storage) == ["t/integer(1)": ["a": .integer(0), "b": .real(0)]])
        }
    }

    /// Regression: the migration's loop variable shadowed the owner column's name, so with a
    /// snapshot present the migration failed, and rows of one partition overwrote another's.
    @Test func aBreakingMigrationKeepsPartitionsAndSnapshotsApart() async throws {
        try await withStorage { storage, _ in
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
            _ = try await storage.snapshot(of: partition, now: now)
            try await storage.appendSchema(SchemaRecord(schema: v2, isBreaking: true, appliedAt: now), migration: StateMigration(from: v1, to: v2))
            #expect(try await state(storage) == ["t/integer(1)": ["keep": .text("one")]])
            #expect(try await state(storage, of: other) == ["t/integer(1)": ["keep": .text("two")]])
        }
    }

    @Test func runtimeGrantsAndBackup() async throws {
        try await withStorage { storage, dir in
            let pattern = try GrantPattern.parse("catalog-*").get()
            try await storage.setRuntimeGrant(RuntimeGrant(user: "pos", pattern: pattern, access: .read))
            try await storage.setRuntimeGrant(RuntimeGrant(user: "pos", pattern: pattern, access: nil))
            #expect(try await storage.runtimeGrants() == [RuntimeGrant(user: "pos", pattern: pattern, access: nil)])
            _ = try await storage.registerClientFile(in: partition, now: now)
            let copy = dir.file("backup.sqlite")
            try await storage.backup(to: copy)
            let restoredDir = dir.file("restored")
            try FileManager.default.createDirectory(atPath: restoredDir, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: copy, toPath: restoredDir + "/" + SQLiteServerStorage.fileName)
            let restored = try SQLiteServerStorage(directory: restoredDir)
            #expect(try await restored.partitions().map(\.name) == ["store-17"])
            #expect(try await restored.runtimeGrants().count == 1)
            try await restored.close()
        }
    }
}

/// `integer(1)`, `text("a")`: key values spelled out (RowKey's description hides them).
func keyText(_ key: RowKey) -> String {
    switch key {
    case .integer(let v): "integer(\(v))"
    case .text(let v): "text(\(v.debugDescription))"
    }
}
