import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// The subscriptions a store records (issue 51) and the chunks of a subscription change.
@Suite struct PartitionStoreSubscriptionsTests {
    private static let cheap = try! SubscriptionSet([Subscription(table: "items", filter: "price < 2")])
    private static let all = try! SubscriptionSet([Subscription(table: "items"), Subscription(table: "orders")])

    private static func chunk(
        _ changes: [RowChange], version: Int64 = 1, isLast: Bool, to set: SubscriptionSet?
    ) -> SubscriptionChunk {
        SubscriptionChunk(
            session: 1, serverVersion: ServerVersion(version: version, salt: version * 1000 + 7),
            setDigest: SubscriptionSet.digest(of: set), isLast: isLast, changes: ChangeRows(Changeset(changes)))
    }

    @Test func aStoreHoldsTheWholePartitionUntilASetIsRecorded() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        #expect(try await store.heldSubscriptions() == nil)
        try await store.recordSubscriptions(Self.cheap)
        #expect(try await store.heldSubscriptions() == Self.cheap)
        try store.close()
        // Read back from the file, as another process would, and after reopening.
        #expect(try PartitionStore.metadata(ofStoreAt: dir.appending("store.sqlite"))?.subscriptions == Self.cheap)
        let reopened = try await makeStore(dir)
        #expect(try await reopened.metadata().subscriptions == Self.cheap)
        try await reopened.recordSubscriptions(nil)
        #expect(try await reopened.heldSubscriptions() == nil)
        try reopened.close()
    }

    @Test func aCompletedStateRecordsTheSetItWasTakenWith() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let staging = try await makeStore(dir, name: "staging.sqlite")
        try await staging.insertStateRows([StateRow(table: "items", key: .integer(1), fields: ["name": .text("pen"), "price": .real(1)])])
        try await staging.completeState(
            serverVersion: ServerVersion(version: 4, salt: 9), clientFile: ClientFileIdentity(id: 3, salt: 5), subscriptions: Self.cheap)
        #expect(try await staging.metadata().subscriptions == Self.cheap)
        try staging.close()
    }

    @Test func chunksAddAndRemoveRowsWithoutCaptureAndTheLastRecordsTheSet() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [
            .insert("items", .integer(1), ["name": .text("pen"), "price": .real(1)]),
            .insert("items", .integer(2), ["name": .text("ink"), "price": .real(5)]),
        ])])
        try await store.recordSubscriptions(Self.cheap)
        // From "cheap items" to every item and order: items 3 and order A enter.
        let first = Self.chunk([.insert("items", .integer(3), ["name": .text("cap"), "price": .real(9)])], isLast: false, to: Self.all)
        let report = try await store.applySubscriptionChunk(first, finalSet: Self.all)
        #expect(report.changesApplied == 1 && report.changesPerTable == ["items": 1])
        #expect(report.serverVersion.version == 1)
        #expect(try await store.heldSubscriptions() == Self.cheap, "not the new set before the last chunk")
        let last = Self.chunk(
            [.insert("orders", .text("A"), order()), .delete("items", .integer(2))], isLast: true, to: Self.all)
        try await store.applySubscriptionChunk(last, finalSet: Self.all)
        #expect(try await store.heldSubscriptions() == Self.all)
        #expect(try await store.pendingChangeCount() == 0, "nothing captured")
        #expect(try await store.metadata().serverVersion.version == 1, "the version does not move")
        let dump = try await store.canonicalDump()
        #expect(dump.contains("i:1 |") && dump.contains("i:3 |") && !dump.contains("i:2 |") && dump.contains("t:\"A\""), "\(dump)")
        // A chunk applied twice (a resent last chunk) changes nothing.
        try await store.applySubscriptionChunk(first, finalSet: Self.all)
        try await store.applySubscriptionChunk(last, finalSet: Self.all)
        #expect(try await store.canonicalDump() == dump)
        #expect(try await store.heldSubscriptions() == Self.all)
        // Back to the whole partition: the last chunk records nil.
        try await store.applySubscriptionChunk(Self.chunk([], isLast: true, to: nil), finalSet: nil)
        #expect(try await store.heldSubscriptions() == nil)
        try store.close()
    }

    @Test func pendingLocalChangesAreKept() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen"), "price": .real(1)])])])
        // An application inserts row 5 and updates row 1's price, not yet uploaded.
        try await sqlite3(store.path, "INSERT INTO items (sku, name, price) VALUES (5, 'mine', 1); UPDATE items SET price = 1.5 WHERE sku = 1")
        let chunk = Self.chunk([
            .insert("items", .integer(5), ["name": .text("theirs"), "price": .real(4)]),
            .insert("items", .integer(1), ["name": .text("pen2"), "price": .real(3)]),
        ], isLast: true, to: Self.cheap)
        let report = try await store.applySubscriptionChunk(chunk, finalSet: Self.cheap)
        #expect(report.changesSkipped == 1, "the insert of a row with a pending local insert is skipped")
        #expect(report.fieldsKeptLocal >= 1, "row 1's local price")
        let dump = try await store.canonicalDump()
        #expect(dump.contains("i:5 | name=t:\"mine\" | price=r:1.0"), "\(dump)")
        #expect(dump.contains("i:1 | name=t:\"pen2\" | price=r:1.5"), "\(dump)")
        #expect(try await store.pendingChangeCount() == 2, "the local changes still go up")
        try store.close()
    }

    @Test func aChunkForAnotherSetIsRefusedAndWritesNothing() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let chunk = Self.chunk([.insert("items", .integer(3), ["name": .text("cap")])], isLast: true, to: Self.all)
        let error = await #expect(throws: StoreError.self) {
            try await store.applySubscriptionChunk(chunk, finalSet: Self.cheap)
        }
        #expect(error?.description.contains(Self.cheap.digestText) == true, "\(String(describing: error))")
        #expect(error?.needsReset == false)
        #expect(try await store.canonicalDump() == "[items]\n[orders]\n")
        #expect(try await store.heldSubscriptions() == nil)
        try store.close()
    }

    @Test func aWholePartitionStoreKeepsTheScopeTokenOfTheChangeItTook() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        #expect(try await store.metadata().subscriptionToken == 0)
        // A change a grant's subscriptions caused: the store's own set stays the whole partition.
        let chunk = SubscriptionChunk(
            session: 1, serverVersion: ServerVersion(version: 1, salt: 1007), setDigest: 0, scopeToken: 0xfedc_ba98_7654_3210,
            isLast: true, changes: ChangeRows(Changeset([.delete("items", .integer(9))])))
        try await store.applySubscriptionChunk(chunk, finalSet: nil)
        #expect(try await store.heldSubscriptions() == nil)
        #expect(try await store.metadata().subscriptionToken == 0xfedc_ba98_7654_3210)
        try store.close()
        #expect(try PartitionStore.metadata(ofStoreAt: dir.appending("store.sqlite"))?.subscriptionToken == 0xfedc_ba98_7654_3210)
        let reopened = try await makeStore(dir)
        try await reopened.recordSubscriptions(nil)
        #expect(try await reopened.metadata().subscriptionToken == 0, "a set recorded without a change has no token")
        try reopened.close()
    }
}
