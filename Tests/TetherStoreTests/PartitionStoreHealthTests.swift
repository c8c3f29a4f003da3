import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherStore

/// A store's soundness (PartitionStore+Health): quick check, the running schema check that
/// notices an application's schema change, recreated triggers, and the repair a reset makes.
@Suite struct PartitionStoreHealthTests {
    @Test func aSoundStorePassesTheQuickCheckAndItsSchemaCheckIsCheap() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        #expect(try await store.quickCheck().isEmpty)
        #expect(try await store.checkSchema() == .unchanged)
        try await sqlite3(dir.appending("store.sqlite"), "CREATE INDEX orders_by_customer ON orders (customer)").check()
        #expect(try await store.checkSchema() == .verified, "an index is harmless")
        #expect(try await store.checkSchema() == .unchanged)
    }

    @Test func anAddedColumnIsNamedByTheRunningCheck() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(dir.appending("store.sqlite"), "ALTER TABLE orders ADD COLUMN colour TEXT").check()
        do {
            _ = try await store.checkSchema()
            Issue.record("the alteration was not noticed")
        } catch {
            #expect(error.isSchemaAlteration)
            #expect(!error.isCorruption)
            #expect(error.description.contains("column orders.colour does not match the schema: the column is not in the schema"), "\(error)")
        }
    }

    @Test func droppedTriggersAreRecreatedAndNamed() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let names = try await sqlite3(
            dir.appending("store.sqlite"), "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'orders' ORDER BY name"
        ).stdout.split(separator: "\n").map(String.init)
        #expect(!names.isEmpty)
        try await sqlite3(dir.appending("store.sqlite"), names.map { "DROP TRIGGER \"\($0)\";" }.joined()).check()
        #expect(try await store.checkSchema() == .triggersRecreated(names))
        try await sqlite3(dir.appending("store.sqlite"), "INSERT INTO orders (id, customer, total, qty, paid) VALUES ('x', 'a', 1, 1, 0)").check()
        #expect(try await store.pendingChangeCount() == 1, "captured again")
    }

    @Test func triggersDroppedWhileClosedAreRecreatedAtOpen() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        try await makeStore(dir).close()
        try await sqlite3(dir.appending("store.sqlite"), "DROP TRIGGER \"\(StoreSQL.triggerPrefix)orders_ins\"").check()
        let store = try await makeStore(dir)
        #expect(store.triggersRecreatedAtOpen == ["\(StoreSQL.triggerPrefix)orders_ins"])
    }

    @Test func anAlteredStoreOpensOnlyWhenToleratedAndAResetRepairsIt() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let path = dir.appending("store.sqlite")
        try await makeStore(dir).close()
        try await sqlite3(path, "ALTER TABLE orders ADD COLUMN colour TEXT; DROP TABLE items; CREATE TABLE mine (x)").check()
        await #expect(throws: StoreError.self) { try await makeStore(dir) }
        let store = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema, tolerateAlteredTables: true)
        #expect(store.alteration?.isSchemaAlteration == true)
        let report = try await store.resetInPlace(
            to: ArrayStateSource([StateRow(table: "orders", key: .text("A"), fields: order())]),
            serverVersion: ServerVersion(version: 3, salt: 1))
        #expect(report.schemaDifferences.contains("table mine dropped: it is not in the schema"), "\(report.schemaDifferences)")
        #expect(report.schemaDifferences.contains("table items created again"))
        #expect(report.schemaDifferences.contains("table orders recreated to the schema"))
        #expect(store.alteration == nil)
        #expect(try await store.checkSchema() != .unchanged, "verified after the repair")
        try store.close()
        let reopened = try await makeStore(dir)
        #expect(reopened.triggersRecreatedAtOpen.isEmpty)
        #expect(try await sqlite3(path, "SELECT id, customer FROM orders").stdout == "A|ann\n")
    }

    @Test func anEmptyFileOrTablelessDatabaseIsEmptyAndAStoreIsNot() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        #expect(FileManager.default.createFile(atPath: dir.appending("empty.sqlite"), contents: nil))
        #expect(try PartitionStore.isEmptyDatabase(path: dir.appending("empty.sqlite")))
        try await sqlite3(dir.appending("wal.sqlite"), "PRAGMA journal_mode = WAL").check()
        #expect(try PartitionStore.isEmptyDatabase(path: dir.appending("wal.sqlite")))
        try await makeStore(dir).close()
        #expect(try !PartitionStore.isEmptyDatabase(path: dir.appending("store.sqlite")))
        try Data("not a database at all, not even close".utf8).write(to: URL(fileURLWithPath: dir.appending("junk.sqlite")))
        #expect(throws: StoreError.self) { try PartitionStore.isEmptyDatabase(path: dir.appending("junk.sqlite")) }
    }

    @Test func corruptionIsToldApartFromOtherErrors() {
        #expect(StoreError.sqlite(path: "p", code: 26, message: "file is not a database").isCorruption)
        #expect(StoreError.sqlite(path: "p", code: 11 | (1 << 8), message: "corrupt").isCorruption)
        #expect(StoreError.corrupt(path: "p", problems: ["x"]).isCorruption)
        #expect(!StoreError.sqlite(path: "p", code: 5, message: "busy").isCorruption)
        #expect(!StoreError.notAStore(path: "p").isCorruption)
    }
}

extension ProcessResult {
    /// Throws unless sqlite3 succeeded.
    fileprivate func check() throws {
        guard status == 0 else { throw POSIXError(.EIO) }
    }
}
