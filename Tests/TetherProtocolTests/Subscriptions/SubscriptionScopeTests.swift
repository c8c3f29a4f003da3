import Testing
import TetherProtocol

/// ``SubscriptionScope``: rows held, history cut by row images, and the stored-bytes evaluation
/// agreeing with the dictionary one.
@Suite struct SubscriptionScopeTests {
    static let schema = Schema(version: 1, tables: [
        TableSchema(name: "items", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "shop", type: .text, nullable: true),
            ColumnSchema(name: "price", type: .real, nullable: true), ColumnSchema(name: "note", type: .text, nullable: true),
        ]),
        TableSchema(name: "notes", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)]),
        TableSchema(name: "other", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)]),
    ])

    static func scope(_ subscriptions: [Subscription]) throws -> SubscriptionScope {
        try SubscriptionScope(
            resolving: SubscriptionSet(subscriptions), schema: schema, parameters: FilterParameters(name: "t", tags: ["shop": "s1"]), now: 0)
    }

    @Test func tablesWholeFilteredOrAbsent() throws {
        let scope = try Self.scope([
            Subscription(table: "items", filter: "shop = {tag:shop}"), Subscription(table: "items", filter: "id < 3"),
            Subscription(table: "notes"),
        ])
        #expect(scope.holds("items", key: .integer(9), ["shop": .text("s1")]))
        #expect(scope.holds("items", key: .integer(2), ["shop": .text("s2")]), "a second subscription of the table, on its key")
        #expect(!scope.holds("items", key: .integer(9), ["shop": .text("s2")]))
        #expect(scope.holds("notes", key: .integer(1), [:]) && scope.coversWhole("notes"))
        #expect(!scope.covers("other") && !scope.holds("other", key: .integer(1), [:]))
        #expect(SubscriptionScope.whole.holds("other", key: .integer(1), [:]))
        #expect(try SubscriptionScope(resolving: nil, schema: Self.schema, parameters: FilterParameters(name: "t"), now: 0).isWhole)
    }

    @Test func storedBytesAreEvaluatedAsTheirDictionary() throws {
        let scope = try Self.scope([Subscription(table: "items", filter: "(shop = 's1' AND price < 10) OR note IS NOT NULL OR id = 5")])
        var random = SystemRandomNumberGenerator()
        let shops: [FieldValue] = [.text("s1"), .text("s2"), .null]
        let prices: [FieldValue] = [.real(1), .real(50), .integer(3), .null]
        let notes: [FieldValue] = [.text("x"), .null, .text("")]
        for _ in 0..<500 {
            var fields: [String: FieldValue] = [:]
            if Bool.random(using: &random) { fields["shop"] = shops.randomElement(using: &random)! }
            if Bool.random(using: &random) { fields["price"] = prices.randomElement(using: &random)! }
            if Bool.random(using: &random) { fields["note"] = notes.randomElement(using: &random)! }
            let key = RowKey.integer(Int64.random(in: 1...8, using: &random))
            let stored = FieldValue.encodedFields(fields)
            #expect(try scope.holds("items", storedKey: key.encoded, storedFields: stored) == scope.holds("items", key: key, fields), "\(key) \(fields)")
        }
        #expect(try FieldValue.decodeFields(FieldValue.encodedFields(["a": .blob([1, 2]), "note": .text("n"), "z": .integer(-5)]), only: [Array("note".utf8)])
            == ["note": .text("n")])
    }

    @Test func historyReachesAScopeAsRowsEnteringLeavingOrNothing() throws {
        let scope = try Self.scope([Subscription(table: "items", filter: "shop = 's1'"), Subscription(table: "notes")])
        func stored(_ shop: String) -> [UInt8] { FieldValue.encodedFields(["shop": .text(shop)]) }
        let changes = Changeset([
            .update("items", .integer(1), ["note": .text("a")]),  // held before and after: as it is
            .update("items", .integer(2), ["shop": .text("s1")]),  // enters: the whole row
            .update("items", .integer(3), ["shop": .text("s2")]),  // leaves
            .update("items", .integer(4), ["note": .text("b")]),  // never held
            .insert("items", .integer(5), ["shop": .text("s1")]),  // a new row, held
            .delete("items", .integer(6)),  // a held row deleted
            .insert("notes", .integer(7), [:]),  // a whole table
            .insert("other", .integer(8), [:]),  // not subscribed
        ])
        let images = RowImages([
            .init(before: stored("s1"), after: .stored(FieldValue.encodedFields(["shop": .text("s1"), "note": .text("a")]))),
            .init(before: stored("s2"), after: .stored(stored("s1"))),
            .init(before: stored("s1"), after: .stored(stored("s2"))),
            .init(before: stored("s2"), after: .stored(FieldValue.encodedFields(["shop": .text("s2"), "note": .text("b")]))),
            .init(before: nil, after: .changeFields),
            .init(before: stored("s1"), after: .absent),
            .init(before: nil, after: .changeFields),
            .init(before: nil, after: .changeFields),
        ])
        #expect(try RowImages.decode(images.encoded) == images)
        #expect(try scope.filtered(changes, images: images).changes == [
            .update("items", .integer(1), ["note": .text("a")]), .insert("items", .integer(2), ["shop": .text("s1")]),
            .delete("items", .integer(3)), .insert("items", .integer(5), ["shop": .text("s1")]), .delete("items", .integer(6)),
            .insert("notes", .integer(7), [:]),
        ])
        #expect(throws: SubscriptionScope.MissingImages.self) { try scope.filtered(changes, images: nil) }
        #expect(try SubscriptionScope.whole.filtered(changes, images: nil) == changes)
    }
}
