import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// Subscriptions in both storages (issue 51): each history entry keeps its row images, a write
/// the uploading session's scope refuses is left out of state and history and recorded with
/// its revert, and the scopes a store was given are kept (the latest two).
extension StorageConformanceTests {
    static let orders = Schema(version: 1, tables: [TableSchema(name: "orders", primaryKey: "id", columns: [
        ColumnSchema(name: "id", type: .text), ColumnSchema(name: "total", type: .real, nullable: true),
        ColumnSchema(name: "note", type: .text, nullable: true),
    ])])

    static func scope(_ filter: String) throws -> SubscriptionScope {
        try SubscriptionScope(
            resolving: SubscriptionSet([Subscription(table: "orders", filter: filter)]), schema: orders,
            parameters: FilterParameters(name: "till"), now: 0)
    }

    @Test(arguments: StorageBackend.allCases)
    func historyKeepsRowImagesAndRefusedWritesAreCompensations(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let (b, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate(
                [upload(1, 1, .insert("orders", .text("o1"), ["total": .real(1), "note": .text("a")]),
                        .insert("orders", .text("o2"), ["total": .real(2), "note": .text("b")]))],
                from: a.id, into: partition, now: now)
            // b holds the rows whose note is 'a': it may update o1, not o2, and not move o1 out.
            let outcome = try await storage.integrate(
                [upload(1, 4, .update("orders", .text("o1"), ["total": .real(10)]), .update("orders", .text("o2"), ["total": .real(20)]),
                        .update("orders", .text("o1"), ["note": .text("z")]), .update("orders", .text("o1"), ["total": .real(11)]))],
                from: b.id, uploadSalt: 5, into: partition, now: now, scope: WriteScope(read: try Self.scope("note = 'a'")))
            #expect(outcome.accepted == 1 && outcome.compensatingWrites == 2 && outcome.integratedSeq == 4)
            #expect(try await state(storage) == [
                "orders/text(\"o1\")": ["total": .real(11), "note": .text("a")], "orders/text(\"o2\")": ["total": .real(2), "note": .text("b")],
            ])
            let history = try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20)
            #expect(history.count == 2)
            #expect(try history[1].decodedChangeset().changes == [
                .update("orders", .text("o1"), ["total": .real(10)]), .update("orders", .text("o1"), ["total": .real(11)]),
            ])
            let images = try RowImages.decode(try #require(history[1].images))
            #expect(images.images.count == 2)
            #expect(try images.images[0].before.map { try FieldValue.decodeFields($0) } == ["total": .real(1), "note": .text("a")])
            #expect(try RowImages.decode(try #require(history[0].images)).images.map(\.after) == [.changeFields, .changeFields])
            #expect(history[0].compensations == nil)
            let record = try CompensationRecord.decode(try #require(history[1].compensations))
            #expect(record.writes.map(\.key) == [.text("o2"), .text("o1")])
            #expect(record.writes.allSatisfy { $0.reason == .outsideSubscriptions })
            // o2 is not b's: it is removed there; o1 is, as the server has it after the upload (b's
            // accepted change included).
            #expect(record.reverts.changes == [
                .delete("orders", .text("o2")), .insert("orders", .text("o1"), ["total": .real(11), "note": .text("a")]),
            ])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aClientFileKeepsItsInitialScopeAndItsLatestTwoChanges(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            #expect(try await storage.appliedScopes(of: a.id) == nil)
            let sets = try ["note = 'a'", "note = 'b'", "note = 'c'"].map { try SubscriptionSet([Subscription(table: "orders", filter: $0)]) }
            func scope(_ i: Int, shop: String) -> AppliedScope {
                AppliedScope(set: sets[i], parameters: FilterParameters(name: "till", id: "d1", tags: ["shop": shop]), now: Double(i) + 0.5)
            }
            try await storage.recordAppliedScope(scope(0, shop: "1"), initial: true, of: a.id)
            // Two changes of the same set with other tags: told apart by their tokens.
            try await storage.recordAppliedScope(scope(1, shop: "1"), initial: false, of: a.id)
            try await storage.recordAppliedScope(scope(1, shop: "2"), initial: false, of: a.id)
            let scopes = try #require(try await storage.appliedScopes(of: a.id))
            #expect(scopes.scope(token: 0) == scope(0, shop: "1"))
            #expect(scopes.scope(token: scope(1, shop: "1").token) == scope(1, shop: "1"))
            #expect(scopes.scope(token: scope(1, shop: "2").token)?.parameters.tags == ["shop": "2"])
            #expect(scope(1, shop: "1").token != scope(1, shop: "2").token && scope(1, shop: "1").token != 0)
            try await storage.recordAppliedScope(scope(2, shop: "2"), initial: false, of: a.id)
            let after = try #require(try await storage.appliedScopes(of: a.id))
            #expect(after.scope(token: scope(1, shop: "1").token) == nil, "the oldest change is forgotten")
            #expect(after.scope(token: 0) == scope(0, shop: "1"), "the state's scope is kept")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aScopeImposedByTheGrantsIsRecordedWithOrWithoutTheDevicesSet(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let imposed = try SubscriptionSet([Subscription(table: "orders", filter: "note = {tag:shop}")])
            let parameters = FilterParameters(name: "till", tags: ["shop": "1"])
            let whole = AppliedScope(set: nil, imposed: imposed, parameters: parameters, now: 1.5)
            let own = AppliedScope(set: try SubscriptionSet([Subscription(table: "orders")]), imposed: imposed, parameters: parameters, now: 2.5)
            try await storage.recordAppliedScope(whole, initial: true, of: a.id)
            try await storage.recordAppliedScope(own, initial: false, of: a.id)
            let scopes = try #require(try await storage.appliedScopes(of: a.id))
            #expect(scopes.scope(token: 0) == whole)
            #expect(scopes.scope(token: own.token) == own)
            #expect(whole.token != AppliedScope(set: nil, imposed: nil, parameters: parameters, now: 1.5).token, "the imposition is in the token")
        }
    }

    /// A device without subscriptions under a grant imposing `note = 'a'`: its state is cut and
    /// its writes outside are compensating writes, on both storages.
    @Test(arguments: StorageBackend.allCases)
    func theScopeAGrantImposesCutsStateAndWrites(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let (b, _) = try await storage.registerClientFile(in: partition, now: now)
            _ = try await storage.integrate(
                [upload(1, 1, .insert("orders", .text("o1"), ["note": .text("a")]), .insert("orders", .text("o2"), ["note": .text("b")]))],
                from: a.id, into: partition, now: now)
            let imposed = try SubscriptionScope(
                imposing: SubscriptionSet([Subscription(table: "orders", filter: "note = 'a'")]), schema: Self.orders,
                parameters: FilterParameters(name: "till"), now: 0)
            let scope = SubscriptionScope.whole.narrowed(by: imposed, schema: Self.orders)
            let reader = try await storage.openState(of: partition)
            let stored = try await reader.nextStored(maxRows: 100, maxBytes: 1 << 20)
            await reader.close()
            #expect(try SessionStreamer.held(stored, by: scope).map { try RowKey.decode($0.key) } == [.text("o1")])
            let outcome = try await storage.integrate(
                [upload(1, 2, .update("orders", .text("o1"), ["total": .real(1)]), .update("orders", .text("o2"), ["total": .real(2)]))],
                from: b.id, uploadSalt: 5, into: partition, now: now, scope: WriteScope(read: scope))
            #expect(outcome.accepted == 1 && outcome.compensatingWrites == 1)
            let history = try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20)
            let record = try CompensationRecord.decode(try #require(history.last?.compensations))
            #expect(record.writes.map(\.key) == [.text("o2")] && record.writes.first?.reason == .outsideSubscriptions)
            #expect(record.reverts.changes == [.delete("orders", .text("o2"))])
        }
    }
}
