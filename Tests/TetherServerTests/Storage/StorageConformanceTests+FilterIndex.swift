import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The filter index in both storages (issue 51): queryable columns are indexed for the rows
/// already stored and kept with every write, a state read for a filtered scope returns only the
/// candidates the index finds, and a filter no index serves over a large table is reported.
extension StorageConformanceTests {
    /// The keys a read for `scope` returns (enough rows that SQLite does not read the state whole).
    func selectedKeys(_ storage: any ServerStorage, _ scope: SubscriptionScope) async throws -> Set<RowKey> {
        let reader = try await storage.openState(of: partition, holdable: [scope])
        var keys: Set<RowKey> = []
        while true {
            let rows = try await reader.nextStored(maxRows: 700, maxBytes: 1 << 20)
            if rows.isEmpty { break }
            for row in rows { keys.insert(try RowKey.decode(row.key)) }
        }
        await reader.close()
        return keys
    }

    @Test(arguments: StorageBackend.allCases)
    func queryableColumnsAreIndexedAndServeStateReads(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            // 3,000 rows before the column is queryable: totals 0..<3000, o100 with no total.
            var rows: [RowChange] = (0..<3000).map { .insert("orders", .text("o\($0)"), ["total": .real(Double($0)), "note": .text("n")]) }
            rows[100] = .insert("orders", .text("o100"), ["note": .text("n")])
            _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: a.id, into: partition, now: now)
            let change = try await storage.reconcileFilterIndex(FilterIndexColumns([QueryableColumn(table: "orders", column: "total")]))
            #expect(change.added == [QueryableColumn(table: "orders", column: "total")] && change.rowsIndexed == 3000)
            #expect(try await storage.reconcileFilterIndex(FilterIndexColumns([QueryableColumn(table: "orders", column: "total")])).added.isEmpty)

            // The bounds are the filter's (`<` leaves o110 out); o100 has no total, so no entry.
            let scope = try Self.scope("total >= 90 AND total < 110 AND note = 'n'")
            #expect(try await selectedKeys(storage, scope) == Set((90..<110).filter { $0 != 100 }.map { RowKey.text("o\($0)") }))
            // Writes keep the index: o95 moves out, o2000 in, o100 gains a total, o99 goes.
            _ = try await storage.integrate(
                [upload(2, 2, .update("orders", .text("o95"), ["total": .real(5000)]), .update("orders", .text("o2000"), ["total": .integer(91)]),
                        .update("orders", .text("o100"), ["total": .real(100)]), .delete("orders", .text("o99")),
                        .insert("orders", .text("new"), ["total": .real(109.5)]))],
                from: a.id, into: partition, now: now)
            let expected = Set((90..<110).filter { $0 != 95 && $0 != 99 }.map { RowKey.text("o\($0)") } + [.text("o2000"), .text("new")])
            #expect(try await selectedKeys(storage, scope) == expected)
            // An OR of ranges, and two scopes at once (a subscription change reads both).
            #expect(try await selectedKeys(storage, try Self.scope("total < 2 OR total IN (2999, 4000)")) == [.text("o0"), .text("o1"), .text("o2999")])
            #expect(try await selectedKeys(storage, try Self.scope("total <= 1")).union(expected)
                == (try await storage.openState(of: partition, holdable: [try Self.scope("total <= 1"), scope]).allKeys()))

            // A filter no index serves: every row of the table, and reported above a bound.
            let unserved = try Self.scope("note = 'n'")
            #expect(try await selectedKeys(storage, unserved).count == 3000)
            #expect(try await storage.unindexedTables(of: unserved, in: partition, over: 2999) == ["orders"])
            #expect(try await storage.unindexedTables(of: unserved, in: partition, over: 3000).isEmpty)
            #expect(try await storage.unindexedTables(of: scope, in: partition, over: 10).isEmpty)

            // Dropped: the same scope reads the table whole.
            #expect(try await storage.reconcileFilterIndex(.none).dropped == [QueryableColumn(table: "orders", column: "total")])
            #expect(try await selectedKeys(storage, scope).count == 3000)
        }
    }
}

extension StorageConformanceTests {
    /// A subscription change's read (``StateSelection/init(changingFrom:to:indexed:)``): with
    /// exact plans on both sides only the rows that move, else the union of both.
    @Test(arguments: StorageBackend.allCases)
    func aChangeReadsTheRowsThatMove(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            _ = try await storage.reconcileFilterIndex(FilterIndexColumns([QueryableColumn(table: "orders", column: "total")]))
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let rows: [RowChange] = (0..<3000).map { .insert("orders", .text("o\($0)"), ["total": .real(Double($0)), "note": .text("n")]) }
            _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: a.id, into: partition, now: now)
            func moved(_ from: String, _ to: String) async throws -> Set<RowKey> {
                try await storage.openState(of: partition, changingFrom: try Self.scope(from), to: try Self.scope(to)).allKeys()
            }
            func keys(_ range: Range<Int>) -> Set<RowKey> { Set(range.map { RowKey.text("o\($0)") }) }
            #expect(try await moved("total >= 1000 AND total < 2000", "total >= 1100 AND total < 2100") == keys(1000..<1100).union(keys(2000..<2100)))
            #expect(try await moved("total < 1000", "total <= 1000") == keys(1000..<1001), "a bound's own row")
            #expect(try await moved("total < 5", "total < 5").isEmpty, "the same filter: nothing read")
            #expect(try await moved("total < 10 AND note = 'n'", "total < 20") == keys(0..<20), "an inexact side: both sides' candidates")

            // A filtered state counts the rows and bytes it selects (what the device's disk must
            // hold), a change's read nothing (it reports no progress), the whole state all.
            let filtered = try await storage.openState(of: partition, holdable: [try Self.scope("total < 300 OR total >= 2900")])
            let (count, bytes) = (filtered.totalRows, filtered.totalBytes)
            #expect(filtered.exactTables == ["orders"], "an exact plan: its rows need no evaluation")
            let inexact = try await storage.openState(of: partition, holdable: [try Self.scope("total < 300 AND note = 'n'")])
            #expect(inexact.exactTables.isEmpty)
            await inexact.close()
            var read: [StoredStateRow] = []
            while case let rows = try await filtered.nextStored(maxRows: 500, maxBytes: 1 << 20), !rows.isEmpty { read += rows }
            await filtered.close()
            #expect(count == 400 && read.count == 400)
            #expect(bytes == Int64(read.reduce(0) { $0 + $1.key.count + $1.fields.count }))
            let change = try await storage.openState(of: partition, changingFrom: try Self.scope("total < 5"), to: try Self.scope("total < 9"))
            #expect(change.totalRows == 0 && change.totalBytes == 0)
            await change.close()
            let whole = try await storage.openState(of: partition)
            #expect(whole.totalRows == 3000 && whole.totalBytes > 7 * bytes)
            await whole.close()
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aRestoreRebuildsThePartitionsIndexEntries(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            _ = try await storage.reconcileFilterIndex(FilterIndexColumns([QueryableColumn(table: "orders", column: "total")]))
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let rows: [RowChange] = (0..<2500).map { .insert("orders", .text("o\($0)"), ["total": .real(Double($0))]) }
            _ = try await storage.integrate([UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(rows))], from: a.id, into: partition, now: now)
            let snapshot = try await storage.snapshot(of: partition, now: now)
            // After the snapshot: o5 moves to 5000, o6 goes, a new row at 7.
            _ = try await storage.integrate(
                [upload(2, 2, .update("orders", .text("o5"), ["total": .real(5000)]), .delete("orders", .text("o6")),
                        .insert("orders", .text("late"), ["total": .real(7)]))],
                from: a.id, into: partition, now: now)
            let scope = try Self.scope("total <= 9")
            #expect(try await selectedKeys(storage, scope) == Set(["o0", "o1", "o2", "o3", "o4", "o7", "o8", "o9", "late"].map { RowKey.text($0) }))
            _ = try await storage.restore(partition, to: snapshot.id)
            // The entries are the snapshot's again: none left over from the rows it does not hold.
            #expect(try await selectedKeys(storage, scope) == Set((0...9).map { RowKey.text("o\($0)") }))
        }
    }
}

extension StateReader {
    func allKeys() async throws -> Set<RowKey> {
        var keys: Set<RowKey> = []
        while true {
            let rows = try await nextStored(maxRows: 500, maxBytes: 1 << 20)
            if rows.isEmpty { break }
            for row in rows { keys.insert(try RowKey.decode(row.key)) }
        }
        await close()
        return keys
    }
}
