import Foundation
import GRDB
import Synchronization
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherStore

/// An idle store closes its connections entirely (writer included) and opens them again on its
/// next use (docs/store.md, "Memory").
@Suite struct PartitionStoreIdleCloseTests {
    /// After a close, the next apply opens the store again and weighs the pending changes —
    /// those captured before the close and those captured while it was closed — from the row
    /// index, which the new writer connection builds again (it is a temporary table of the old one).
    @Test func anIdleStoreReopensOnItsNextApplyWithTheRowIndexBuiltAgain() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        try await store.apply([serverEntry(1, [
            .insert("items", .integer(1), ["name": .text("pen"), "price": .real(1)]),
            .insert("items", .integer(2), ["name": .text("cap"), "price": .real(1)]),
        ])])
        try await sqlite3(store.path, "UPDATE items SET price = 2 WHERE sku = 1")
        var report = try await store.apply([serverEntry(2, [.update("items", .integer(1), ["price": .real(3), "name": .text("ink")])])])
        #expect(report.fieldsKeptLocal == 1)
        #expect(try await rowIndexExists(store), "the apply built the index on the writer")

        #expect(store.releaseMemory())
        #expect(!store.connections.isOpen)
        // Captured while the store is closed: the index of the closed writer never saw it.
        try await sqlite3(store.path, "UPDATE items SET name = 'nib' WHERE sku = 2")
        #expect(!store.connections.isOpen, "an application's commit does not open the store")

        report = try await store.apply([serverEntry(3, [
            .update("items", .integer(1), ["price": .real(4), "name": .text("lid")]),
            .update("items", .integer(2), ["price": .real(5), "name": .text("tip")]),
        ])])
        #expect(store.connections.reopens == 1)
        #expect(report.fieldsKeptLocal == 2, "price of 1 (before the close) and name of 2 (while closed)")
        #expect(try await sqlite3(store.path, "SELECT sku, name, price FROM items ORDER BY sku").stdout == "1|lid|2.0\n2|nib|5.0\n")
        #expect(try await rowIndexExists(store))
    }

    /// Pending changes read for an upload, and their acknowledgement, are the same across a close:
    /// nothing is lost or read twice.
    @Test func pendingChangesAreTheSameAfterAReopen() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'a', NULL); INSERT INTO items VALUES (2, 'b', 2.5)")
        let before = try await store.allPendingChanges()
        #expect(before.count == 2)
        #expect(store.releaseMemory())
        #expect(try await store.allPendingChanges() == before)
        #expect(store.connections.reopens == 1)
        try await sqlite3(store.path, "UPDATE items SET name = 'c' WHERE sku = 1")
        #expect(store.releaseMemory())
        let seq = try await store.lastAssignedSeq()
        #expect(store.releaseMemory())
        #expect(try await store.acknowledge(throughSeq: before.map(\.seq).max() ?? 0) == 2)
        #expect(store.releaseMemory())
        let after = try await store.allPendingChanges()
        #expect(after.map(\.seq) == [seq])
        #expect(store.connections.reopens == 4)
    }

    /// A reopened writer has the agent's `synchronous` again, and neither the close nor the
    /// reopen writes to the store: the WAL is left as it was, the schema cookie does not move.
    @Test func aCloseAndReopenWritesNothingAndRestoresTheConnectionsSettings() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        try await store.apply([serverEntry(1, [.insert("items", .integer(1), ["name": .text("pen")])])])
        let version = try await store.read { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") }
        let files = [store.path, store.path + "-wal"].map { fileStatus($0) }
        #expect(files.allSatisfy { $0 != nil })
        #expect(store.releaseMemory())
        #expect([store.path, store.path + "-wal"].map { fileStatus($0) } == files, "the close checkpoints nothing, deletes nothing")
        let synchronous = try await store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(synchronous == 1, "NORMAL")
        #expect(try await store.read { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") } == version)
        #expect(store.connections.reopens == 1)
    }

    /// An access in progress — a read, a write, a reset's write — keeps the store open however
    /// long it lasts; the store closes once it ended.
    @Test(arguments: ["read", "write", "writeAttaching"])
    func noCloseDuringAnAccess(_ kind: String) async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        let gate = Gate()
        let body: @Sendable (Database) throws -> Int = { db in
            gate.enter()
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? -1
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                switch kind {
                case "read": try await store.read(body)
                case "write": try await store.write(body)
                default: try await store.writeAttaching(nil, body)
                }
            }
            try await eventually("the access holds the connection") { gate.entered }
            #expect(!store.releaseMemory(), "not closed under the access")
            #expect(store.connections.isOpen)
            gate.open()
            #expect(try await group.next() == 0)
        }
        #expect(store.releaseMemory())
        #expect(!store.connections.isOpen)
        #expect(try await store.pendingChangeCount() == 0)
    }

    /// A store file removed or replaced while the store is closed is not opened again: the
    /// agent neither creates an empty file at the path nor syncs another file.
    @Test func aRemovedOrReplacedFileIsNotReopened() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        defer { try? store.close() }
        let other = try await makeStore(dir, name: "other.sqlite")
        try other.close()
        #expect(store.releaseMemory())
        try FileManager.default.moveItem(atPath: store.path, toPath: dir.appending("moved.sqlite"))
        await #expect(throws: StoreError.io(path: store.path, operation: "reopen (the store file is gone)", errno: ENOENT)) {
            try await store.pendingChangeCount()
        }
        #expect(!FileManager.default.fileExists(atPath: store.path))
        try FileManager.default.moveItem(atPath: other.path, toPath: store.path)
        await #expect(throws: StoreError.io(path: store.path, operation: "reopen (the store file was replaced)", errno: ESTALE)) {
            try await store.pendingChangeCount()
        }
        #expect(!store.connections.isOpen)
    }

    /// A store closed for good stays closed: an access throws, an idle close has nothing to do.
    @Test func aStoreClosedForGoodIsNotReopened() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try store.close()
        #expect(store.releaseMemory())
        await #expect(throws: StoreError.sqlite(path: store.path, code: 21, message: "the store is closed")) {
            try await store.pendingChangeCount()
        }
        #expect(store.connections.reopens == 0)
    }

    private func rowIndexExists(_ store: PartitionStore) async throws -> Bool {
        try await store.write { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE name = '_tether_log_rows'") == 1
        }
    }

    /// Size and modification time of a file; nil when there is none.
    private func fileStatus(_ path: String) -> [Int]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
    }
}

/// Holds a database access until opened: `enter()` (on GRDB's queue) says it began and waits.
private final class Gate: Sendable {
    private let state = Mutex((entered: false, open: false))
    var entered: Bool { state.withLock { $0.entered } }
    func open() { state.withLock { $0.open = true } }
    func enter() {
        state.withLock { $0.entered = true }
        while !state.withLock({ $0.open }) { usleep(1000) }
    }
}
