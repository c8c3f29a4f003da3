import Foundation
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// State rows written straight from a chunk's bytes: every value as SQLite stores it, every row
/// checked against the schema, and a chunk with one bad row writes nothing.
@Suite struct StateRowWriterTests {
    func rows(_ changes: RowChange...) -> StateRows { StateRows(Changeset(changes)) }

    @Test func everyValueIsStoredAsItsColumnHoldsIt() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        let store = try await makeStore(dir)
        defer { try? store.close() }
        try await store.insertStateRows(rows(
            .insert("orders", .text("o1"), ["customer": .text("grüße"), "total": .integer(3), "qty": .integer(-7), "paid": .integer(1), "note": .text(""), "photo": .blob([])]),
            .insert("orders", .text(""), ["customer": .text("b"), "total": .real(0.25), "qty": .integer(Int64.min), "paid": .integer(0)]),
            .insert("items", .integer(42), ["name": .text("n"), "price": .null, "sku": .integer(42)])))
        let path = dir.appending("store.sqlite")
        let dump = try await sqlite3(path, """
            SELECT id, customer, typeof(total), total, qty, paid, typeof(note), length(note), typeof(photo), length(photo) FROM orders ORDER BY id;
            SELECT sku, name, typeof(price) FROM items;
            """)
        #expect(dump.stdout == """
            |b|real|0.25|-9223372036854775808|0|null||null|
            o1|grüße|real|3.0|-7|1|text|0|blob|0
            42|n|null

            """)
        // The same chunk again (received twice) leaves the same rows; a nullable column a
        // row leaves out becomes null again.
        try await store.insertStateRows(rows(
            .insert("orders", .text("o1"), ["customer": .text("grüße"), "total": .integer(3), "qty": .integer(-7), "paid": .integer(1)])))
        #expect(try await sqlite3(path, "SELECT typeof(note), typeof(photo), count(*) FROM orders WHERE id = 'o1'").stdout == "null|null|1\n")
        #expect(try await store.pendingChangeCount() == 0, "state rows are not captured")
    }

    @Test func aRowThatDoesNotFitFailsTheChunkAndWritesNothing() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        let store = try await makeStore(dir)
        defer { try? store.close() }
        let good = RowChange.insert("orders", .text("ok"), order())
        let cases: [(RowChange, StoreError)] = [
            (.insert("nope", .text("a"), [:]), .unknownTable(table: "nope")),
            (.insert("orders", .text("a"), order().merging(["colour": .text("red")]) { a, _ in a }), .unknownColumn(table: "orders", column: "colour")),
            (.insert("orders", .integer(1), order()), .typeMismatch(table: "orders", column: "id", expected: "text", found: "integer")),
            (.insert("orders", .text("a"), order().merging(["paid": .integer(2)]) { _, b in b }), .typeMismatch(table: "orders", column: "paid", expected: "boolean", found: "integer")),
            (.insert("orders", .text("a"), order().merging(["qty": .text("1")]) { _, b in b }), .typeMismatch(table: "orders", column: "qty", expected: "integer", found: "text")),
            (.insert("orders", .text("a"), order().merging(["customer": .null]) { _, b in b }), .missingValue(table: "orders", column: "customer")),
            (.insert("orders", .text("a"), order().filter { $0.key != "total" }), .missingValue(table: "orders", column: "total")),
            (.insert("orders", .text("a"), order().merging(["id": .text("b")]) { _, b in b }),
             .typeMismatch(table: "orders", column: "id", expected: "the change's key", found: "a different key")),
        ]
        for (bad, expected) in cases {
            await #expect(throws: expected) { try await store.insertStateRows(rows(good, bad)) }
        }
        #expect(try await sqlite3(dir.appending("store.sqlite"), "SELECT count(*) FROM orders").stdout == "0\n")
        // The key repeated among the fields is fine when it is the row's own.
        try await store.insertStateRows(rows(.insert("orders", .text("a"), order().merging(["id": .text("a")]) { _, b in b })))
        #expect(try await sqlite3(dir.appending("store.sqlite"), "SELECT id FROM orders").stdout == "a\n")
    }
}
