import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// One recovery scenario: the device's synced state is `base`; it then makes `local` changes
/// (unsynced); the server's state at reset time is `server`.
struct RecoveryCase: CustomTestStringConvertible, Sendable {
    var name: String
    var local: String
    var server: [Int64: (String, Double?)]
    var expected: [Int64: (String, Double?)]
    var queued: [RowChange]
    var check: @Sendable (RecoveryReport) -> Bool

    var testDescription: String { name }

    static let base: [Int64: (String, Double?)] = [1: ("pen", 1), 2: ("ink", 2)]

    static func rows(_ rows: [Int64: (String, Double?)]) -> [StateRow] {
        rows.map { key, value in
            StateRow(table: "items", key: .integer(key), fields: ["name": .text(value.0), "price": value.1.map { .real($0) } ?? .null])
        }
    }
}

private func item(_ name: String, _ price: Double?) -> [String: FieldValue] {
    ["name": .text(name), "price": price.map { .real($0) } ?? .null]
}

let recoveryCases: [RecoveryCase] = [
    RecoveryCase(
        name: "rule 1: a row inserted on the device and never synced is kept",
        local: "INSERT INTO items VALUES (3, 'cap', 3.0)",
        server: RecoveryCase.base, expected: [1: ("pen", 1), 2: ("ink", 2), 3: ("cap", 3)],
        queued: [.insert("items", .integer(3), item("cap", 3))],
        check: { $0.insertsKept == 1 && $0.kept == 1 && $0.dropped == 0 }),
    RecoveryCase(
        name: "rule 2: deleted on the server, updated on the device: the delete wins",
        local: "UPDATE items SET price = 9 WHERE sku = 2",
        server: [1: ("pen", 1)], expected: [1: ("pen", 1)],
        queued: [],
        check: { $0.updatesDropped == 1 && $0.kept == 0 }),
    RecoveryCase(
        name: "rule 3: deleted on the device, still on the server: the delete is applied and synced",
        local: "DELETE FROM items WHERE sku = 2",
        server: RecoveryCase.base, expected: [1: ("pen", 1)],
        queued: [.delete("items", .integer(2))],
        check: { $0.deletesKept == 1 && $0.dropped == 0 }),
    RecoveryCase(
        name: "rule 4: the same field changed on both: the device's value wins",
        local: "UPDATE items SET price = 9 WHERE sku = 1",
        server: [1: ("pen", 5), 2: ("ink", 2)], expected: [1: ("pen", 9), 2: ("ink", 2)],
        queued: [.update("items", .integer(1), ["price": .real(9)])],
        check: { $0.updatesKept == 1 && $0.fieldsLocalWon == 1 }),
    RecoveryCase(
        name: "rule 5: different fields changed on each side: both are kept",
        local: "UPDATE items SET price = 9 WHERE sku = 1",
        server: [1: ("quill", 1), 2: ("ink", 2)], expected: [1: ("quill", 9), 2: ("ink", 2)],
        queued: [.update("items", .integer(1), ["price": .real(9)])],
        check: { $0.updatesKept == 1 }),
    RecoveryCase(
        name: "insert of a key the server has: merged field by field, local fields win",
        local: "INSERT INTO items VALUES (3, 'cap', 3.0)",
        server: [1: ("pen", 1), 2: ("ink", 2), 3: ("lid", nil)], expected: [1: ("pen", 1), 2: ("ink", 2), 3: ("cap", 3)],
        queued: [.insert("items", .integer(3), item("cap", 3))],
        check: { $0.insertsMerged == 1 && $0.fieldsLocalWon == 2 }),
    RecoveryCase(
        name: "several local edits of one row replay as one update",
        local: "UPDATE items SET price = 7 WHERE sku = 1; UPDATE items SET name = 'nib' WHERE sku = 1; UPDATE items SET price = 8 WHERE sku = 1",
        server: [1: ("pen", 5), 2: ("ink", 2)], expected: [1: ("nib", 8), 2: ("ink", 2)],
        queued: [.update("items", .integer(1), ["name": .text("nib"), "price": .real(8)])],
        check: { $0.updatesKept == 1 && $0.localChanges == 3 && $0.kept == 1 }),
    RecoveryCase(
        name: "several local edits of a row the server deleted are all dropped",
        local: "UPDATE items SET price = 7 WHERE sku = 1; UPDATE items SET name = 'nib' WHERE sku = 1",
        server: [2: ("ink", 2)], expected: [2: ("ink", 2)],
        queued: [],
        check: { $0.updatesDropped == 1 && $0.kept == 0 }),
    RecoveryCase(
        name: "insert then delete of a never-synced row leaves nothing",
        local: "INSERT INTO items VALUES (3, 'cap', 3.0); DELETE FROM items WHERE sku = 3",
        server: RecoveryCase.base, expected: RecoveryCase.base,
        queued: [],
        check: { $0.deletesDropped == 1 && $0.kept == 0 }),
    RecoveryCase(
        name: "delete then insert of a row replays as an insert merged into the server's row",
        local: "DELETE FROM items WHERE sku = 2; INSERT INTO items VALUES (2, 'new', NULL)",
        server: [1: ("pen", 1), 2: ("ink", 4)], expected: [1: ("pen", 1), 2: ("new", nil)],
        queued: [.insert("items", .integer(2), item("new", nil))],
        check: { $0.insertsMerged == 1 }),
]

@Suite struct RecoveryReplayerTests {
    @Test(arguments: recoveryCases)
    func replaysUnsyncedChangesByTheRecoveryRules(_ scenario: RecoveryCase) async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, RecoveryCase.rows(RecoveryCase.base).map { .insert($0.table, $0.key, $0.fields) })])
        #expect(try await sqlite3(store.path, scenario.local).status == 0)
        let unsynced = try await store.pendingChangeCount()

        let report = try await store.resetInPlace(
            to: ArrayStateSource(RecoveryCase.rows(scenario.server)), serverVersion: ServerVersion(version: 40, salt: 1),
            recovering: .pendingChanges)
        let recovery = try #require(report.recovery)
        #expect(scenario.check(recovery), "\(recovery)")
        #expect(report.localChangesCleared == unsynced)

        let expectedRows = Dictionary(uniqueKeysWithValues: scenario.expected.map { key, value in
            (RowKey.integer(key), item(value.0, value.1))
        })
        #expect(try await store.canonicalDump() == CanonicalDump.dump(schema: testSchema, rows: ["items": expectedRows]))
        #expect(try await store.allPendingChanges().map(\.change) == scenario.queued)
        #expect(try await store.metadata().serverVersion == ServerVersion(version: 40, salt: 1))
        try store.close()
    }

    /// While the server heals (docs/client-reset.md, "Healing a restored server"), an update or
    /// a delete of a row the server's state lacks is kept and queued rather than dropped: another
    /// device's view may bring the row back, and the server applies it on top. The update's
    /// values wait in `_tether_held` (the row is absent), so the upload still carries them, and a
    /// download that re-creates the row gets them.
    @Test func whileHealingUpdatesAndDeletesOfRowsTheServerLacksAreKept() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.apply([serverEntry(1, RecoveryCase.rows(RecoveryCase.base).map { .insert($0.table, $0.key, $0.fields) })])
        #expect(try await sqlite3(store.path, "UPDATE items SET price = 9 WHERE sku = 2; DELETE FROM items WHERE sku = 1").status == 0)

        let report = try await store.resetInPlace(
            to: ArrayStateSource([]), serverVersion: ServerVersion(version: 40, salt: 1),
            recovering: .pendingChanges, keepingChangesOfAbsentRows: true)
        let recovery = try #require(report.recovery)
        #expect(recovery.updatesKept == 1 && recovery.deletesKept == 1 && recovery.dropped == 0, "\(recovery)")
        #expect(try await store.canonicalDump() == CanonicalDump.dump(schema: testSchema, rows: ["items": [:]]))
        let queued = try await store.allPendingChanges().map(\.change)
        #expect(Set(queued) == [.update("items", .integer(2), ["price": .real(9)]), .delete("items", .integer(1))])
        // The upload carries the held value although the row is absent.
        let batch = try #require(try await store.pendingChanges(after: 0, limit: 100))
        #expect(batch.changeset.changes.contains(.update("items", .integer(2), ["price": .real(9)])), "\(batch.changeset)")
        // The server heals the row back: it is re-created with the kept update on top.
        try await store.apply([serverEntry(41, [.insert("items", .integer(2), item("ink", 2))])])
        #expect(try await store.canonicalDump() == CanonicalDump.dump(schema: testSchema, rows: ["items": [.integer(2): item("ink", 9)]]))
        try store.close()
    }

    @Test func aLocalChangeThatNoLongerFitsTheSchemaMakesRecoveryImpossible() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'pen', 1.0)")
        let before = try await store.canonicalDump()
        let error = await #expect(throws: StoreError.self) {
            try await store.resetInPlace(
                to: ArrayStateSource([]), serverVersion: ServerVersion(version: 2, salt: 2),
                recovering: .changes([.update("gone", .integer(1), ["x": .integer(1)])]))
        }
        #expect(error == .unknownTable(table: "gone"))
        // Rolled back: the store and its pending changes are untouched.
        #expect(try await store.canonicalDump() == before)
        #expect(try await store.pendingChangeCount() == 1)
        try store.close()
    }

    /// Fault campaign, seed 1: an application committed while a reset waited for the store's
    /// write lock; the reset had read the pending changes before, then cleared the log in its
    /// transaction — the change was gone. The pending changes are now read inside the
    /// transaction, so a change is either replayed or committed after the rewrite.
    @Test func seed1AChangeCommittedWhileTheResetWaitsForTheLockIsReplayed() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'pen', 1.0)")
        // An application's transaction holds the write lock when the reset starts, and
        // commits while the reset waits for it.
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let application = try DatabaseQueue(path: store.path, configuration: configuration)
        defer { try? application.close() }
        let locked = DispatchSemaphore(value: 0)
        let commit = DispatchSemaphore(value: 0)
        let committed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? application.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "INSERT INTO items VALUES (2, 'ink', 2.0)")
                locked.signal()
                commit.wait()
                try db.execute(sql: "COMMIT")
            }
            committed.signal()
        }
        await Self.wait(locked)
        async let reset = store.resetInPlace(
            to: ArrayStateSource([]), serverVersion: ServerVersion(version: 2, salt: 2), recovering: .pendingChanges)
        // Give the reset time to reach the lock; whatever the timing, nothing may be lost.
        try await Task.sleep(for: .milliseconds(300))
        commit.signal()
        await Self.wait(committed)
        let report = try await reset
        #expect(report.recovery?.kept == 2, "the concurrent insert is replayed with the earlier one")
        let rows = try await application.read { db in try String.fetchAll(db, sql: "SELECT name FROM items ORDER BY sku") }
        #expect(rows == ["pen", "ink"])
        #expect(try await store.pendingChangeCount() == 2, "and both are queued for upload")
        try store.close()
    }

    private static func wait(_ semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    /// The log replayed a row at a time (a reset's `.pendingChanges`, never held in memory)
    /// gives what replaying the same changes as a list gives: the same store, the same counts,
    /// the same changes queued (rows in another order: they are independent).
    @Test(arguments: [1, 2, 3, 4, 5])
    func replayingTheLogRowByRowEqualsReplayingTheList(seed: UInt64) async throws {
        var rng = SeededRandom(seed: seed)
        var script = "BEGIN;"
        for _ in 0..<120 {
            let sku = Int.random(in: 1...25, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: script += "INSERT INTO items VALUES (\(sku), 'n\(sku)', \(Int.random(in: 1...9, using: &rng))) ON CONFLICT(sku) DO UPDATE SET name = excluded.name;"
            case 1: script += "UPDATE items SET price = \(Int.random(in: 1...9, using: &rng)) WHERE sku = \(sku);"
            case 2: script += "UPDATE items SET name = 'm\(Int.random(in: 1...3, using: &rng))' WHERE sku = \(sku);"
            default: script += "DELETE FROM items WHERE sku = \(sku);"
            }
        }
        script += "COMMIT;"
        let server = (1...25).filter { _ in Bool.random(using: &rng) }.map {
            StateRow(table: "items", key: .integer(Int64($0)), fields: item("s\($0)", Double($0)))
        }
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        var outcomes: [(dump: String, report: RecoveryReport, queued: [RowChange])] = []
        var logged = 0
        for (name, fromLog) in [("log.sqlite", true), ("list.sqlite", false)] {
            let store = try await makeStore(dir, name: name)
            try await store.apply([serverEntry(1, (1...12).map { .insert("items", .integer(Int64($0)), item("b\($0)", 1)) })])
            #expect(try await sqlite3(store.path, script).status == 0)
            let pending = try await store.allPendingChanges().map(\.change)
            if fromLog { logged = try await store.pendingChangeCount() }
            let report = try await store.resetInPlace(
                to: ArrayStateSource(server), serverVersion: ServerVersion(version: 9, salt: 1),
                recovering: fromLog ? .pendingChanges : .changes(pending))
            outcomes.append((try await store.canonicalDump(), try #require(report.recovery), try await store.allPendingChanges().map(\.change)))
            try store.close()
        }
        #expect(outcomes[0].dump == outcomes[1].dump, "seed \(seed)")
        // Counted apart: the log replay counts every entry, the list only the changes read from
        // it (an insert of a row gone since says nothing and is not read).
        #expect(outcomes[0].report.localChanges == logged, "seed \(seed)")
        var reports = (outcomes[0].report, outcomes[1].report)
        reports.0.localChanges = 0
        reports.1.localChanges = 0
        #expect(reports.0 == reports.1, "seed \(seed)")
        let order = { (a: RowChange, b: RowChange) in (a.table, a.key) < (b.table, b.key) }
        #expect(outcomes[0].queued.sorted(by: order) == outcomes[1].queued.sorted(by: order), "seed \(seed)")
        #expect(outcomes[0].report.localChanges > 0)
    }
}
