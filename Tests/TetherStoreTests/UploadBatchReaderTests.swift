import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// The upload batch read straight into wire form against the same batch made the way it was
/// before: each entry as a ``RowChange`` with the row's values now, then collapsed per row.
@Suite struct UploadBatchReaderTests {
    struct LoggedRowID: Hashable {
        var table: String
        var key: RowKey
    }

    /// Each row's change of a changeset (the order of different rows is free: they commute).
    static func byRow(_ changeset: Changeset) -> [LoggedRowID: RowChange] {
        var result: [LoggedRowID: RowChange] = [:]
        for change in changeset.changes {
            let id = LoggedRowID(table: change.table, key: change.key)
            #expect(result[id] == nil, "a row twice in one batch")
            result[id] = change
        }
        return result
    }

    /// Random application writes (inserts, updates of some columns, deletes, key changes,
    /// invalid UTF-8 and empty values) and server deletes of rows with pending updates (whose
    /// values are then held), read in batches of random sizes.
    @Test(arguments: [3, 11, 2026] as [UInt64])
    func batchesCarryWhatTheEntriesAndTheRowsSay(seed: UInt64) async throws {
        var rng = SeededRandom(seed: seed)
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let app = try DatabaseQueue(path: store.path)
        var serverVersion: Int64 = 0
        for _ in 0..<400 {
            let sku = Int64.random(in: 1...25, using: &rng)
            let name: DatabaseValue = switch Int.random(in: 0..<10, using: &rng) {
            case 0: "".databaseValue
            case 1: try await app.read { db in try DatabaseValue.fetchOne(db, sql: "SELECT CAST(x'61ff62' AS TEXT)")! }
            default: "item \(Int.random(in: 0..<1000, using: &rng))".databaseValue
            }
            let price: DatabaseValue = Bool.random(using: &rng) ? .null : Double(Int.random(in: 0..<100, using: &rng)).databaseValue
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<4:
                try await app.write { db in try db.execute(sql: "INSERT OR REPLACE INTO items VALUES (?, ?, ?)", arguments: [sku, name, price]) }
            case 4..<6:
                try await app.write { db in try db.execute(sql: "UPDATE items SET name = ? WHERE sku = ?", arguments: [name, sku]) }
            case 6:
                try await app.write { db in try db.execute(sql: "UPDATE items SET price = ?, name = ? WHERE sku = ?", arguments: [price, name, sku]) }
            case 7:
                try await app.write { db in try db.execute(sql: "DELETE FROM items WHERE sku = ?", arguments: [sku]) }
            case 8:
                try await app.write { db in try db.execute(sql: "UPDATE OR IGNORE items SET sku = ? WHERE sku = ?", arguments: [sku + 30, sku]) }
            default:
                serverVersion += 1
                try await store.apply([serverEntry(serverVersion, [.delete("items", .integer(sku))])])
            }
        }
        try app.close()
        let all = try await store.allPendingChanges()
        #expect(all.count > 100)
        var after: Int64 = 0
        var batches = 0
        while let batch = try await store.pendingChanges(after: after, limit: Int.random(in: 1...60, using: &rng)) {
            let expected = Changeset(all.filter { $0.seq >= batch.firstSeq && $0.seq <= batch.lastSeq }.map(\.change)).collapsed()
            #expect(Self.byRow(batch.changeset) == Self.byRow(expected), "batch \(batch.firstSeq)...\(batch.lastSeq)")
            after = batch.lastSeq
            batches += 1
        }
        #expect(batches > 5)
        try store.close()
    }

    /// Text an application stored that is not UTF-8 goes out repaired (the protocol's texts
    /// are UTF-8), as a `String` made of it would be; empty texts and blobs stay empty, not null.
    @Test func textThatIsNotUTF8IsRepairedAndEmptyValuesStayEmpty() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, """
            INSERT INTO orders (id, customer, total, qty, paid, note, photo) VALUES ('a', CAST(x'61ff62' AS TEXT), 1, 2, 1, '', x'');
            """)
        let batch = try #require(try await store.pendingChanges(after: 0))
        #expect(batch.changeset.changes == [.insert("orders", .text("a"), [
            "customer": .text("a\u{FFFD}b"), "total": .real(1), "qty": .integer(2), "paid": .integer(1), "note": .text(""), "photo": .blob([]),
        ])])
        try store.close()
    }
}
