import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// ``PolicyStorage``, the same on both storages: the schema history and a breaking migration,
/// flags and runtime grants that persist.
extension StorageConformanceTests {
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
}
