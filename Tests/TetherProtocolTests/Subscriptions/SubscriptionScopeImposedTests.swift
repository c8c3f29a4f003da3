import Testing
import TetherProtocol

/// ``SubscriptionScope/narrowed(by:schema:)``: a device's scope intersected with what its grants
/// impose (issue 51), case by case and over random rows; and the token of a whole-partition
/// store on the wire.
@Suite struct SubscriptionScopeImposedTests {
    static let schema = Schema(version: 1, tables: [
        TableSchema(name: "items", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "shop", type: .text, nullable: true),
            ColumnSchema(name: "price", type: .real, nullable: true),
        ]),
        TableSchema(name: "notes", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "shop", type: .text, nullable: true),
        ]),
        TableSchema(name: "other", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)]),
    ])
    static let parameters = FilterParameters(name: "till", tags: ["shop": "s1"])

    static func own(_ subscriptions: [Subscription]?) throws -> SubscriptionScope {
        try SubscriptionScope(resolving: subscriptions.map { try SubscriptionSet($0) }, schema: schema, parameters: parameters, now: 0)
    }

    static func imposed(_ subscriptions: [Subscription]?) throws -> SubscriptionScope {
        try SubscriptionScope(imposing: subscriptions.map { try SubscriptionSet($0) }, schema: schema, parameters: parameters, now: 0)
    }

    @Test func nothingImposedLeavesTheScopeAsItIs() throws {
        for own in [nil, [Subscription(table: "items", filter: "price < 3")], []] {
            let scope = try Self.own(own)
            #expect(scope.narrowed(by: try Self.imposed(nil), schema: Self.schema) == scope)
            #expect(scope.narrowed(by: try Self.imposed([]), schema: Self.schema) == scope)
            #expect(scope.narrowed(by: try Self.imposed([Subscription(table: "items")]), schema: Self.schema) == scope, "a whole table restricts nothing")
        }
        #expect(SubscriptionScope.whole.narrowed(by: try Self.imposed(nil), schema: Self.schema).isWhole)
    }

    @Test func aWholePartitionDeviceHoldsTheImposedRowsAndEveryOtherTableWhole() throws {
        let scope = SubscriptionScope.whole.narrowed(by: try Self.imposed([Subscription(table: "items", filter: "shop = {tag:shop}")]), schema: Self.schema)
        #expect(!scope.isWhole, "no ready file, and the state is filtered")
        #expect(scope.holds("items", key: .integer(1), ["shop": .text("s1")]))
        #expect(!scope.holds("items", key: .integer(2), ["shop": .text("s2")]))
        #expect(!scope.holds("items", key: .integer(3), ["shop": .null]), "unknown is not a match")
        #expect(scope.coversWhole("notes") && scope.coversWhole("other"))
        #expect(!scope.coversWhole("items") && scope.covers("items"))
    }

    @Test func theDevicesOwnFiltersAndTheImposedOnesMustBothMatch() throws {
        let own = try Self.own([
            Subscription(table: "items", filter: "price < 10"), Subscription(table: "items", filter: "id = 7"),
            Subscription(table: "notes"),
        ])
        let imposed = try Self.imposed([
            Subscription(table: "items", filter: "shop = {tag:shop}"), Subscription(table: "items", filter: "shop IS NULL"),
            Subscription(table: "notes", filter: "shop = 's1'"), Subscription(table: "other", filter: "id = 1"),
        ])
        let scope = own.narrowed(by: imposed, schema: Self.schema)
        #expect(scope.holds("items", key: .integer(1), ["shop": .text("s1"), "price": .real(5)]))
        #expect(scope.holds("items", key: .integer(7), ["shop": .null, "price": .real(50)]), "the device's second filter, the grant's second")
        #expect(!scope.holds("items", key: .integer(1), ["shop": .text("s2"), "price": .real(5)]), "the grant's filters fail")
        #expect(!scope.holds("items", key: .integer(1), ["shop": .text("s1"), "price": .real(50)]), "the device's filters fail")
        #expect(scope.holds("notes", key: .integer(1), ["shop": .text("s1")]) && !scope.holds("notes", key: .integer(2), ["shop": .text("s2")]))
        #expect(!scope.covers("other"), "a table the device does not subscribe to stays out, imposed or not")
    }

    @Test func anImposedFilterThatCannotBeResolvedIsRefused() {
        #expect(throws: SubscriptionSetError.self) { try Self.imposed([Subscription(table: "items", filter: "shop = {tag:zone}")]) }
        #expect(throws: SubscriptionSetError.self) { try Self.imposed([Subscription(table: "items", filter: "nope = 1")]) }
        #expect(throws: SubscriptionSetError.self) { try Self.imposed([Subscription(table: "missing")]) }
    }

    /// Over random rows and random sets: held by the narrowed scope exactly when held by the
    /// device's scope and, of a restricted table, by one of the imposed filters — by fields and
    /// by stored bytes alike.
    @Test func overRandomRowsTheNarrowedScopeIsTheIntersection() throws {
        var random = SystemRandomNumberGenerator()
        let filters = [nil, "shop = 's1'", "shop = {tag:shop} OR price > 4", "price BETWEEN 1 AND 5", "shop IS NULL", "NOT (id IN (1, 2))"]
        let tables = ["items", "notes"]
        func randomSet() -> [Subscription]? {
            guard Int.random(in: 0..<5, using: &random) > 0 else { return nil }
            return (0..<Int.random(in: 0...3, using: &random)).map { _ in
                let table = tables.randomElement(using: &random)!
                let filter = filters.randomElement(using: &random)!
                return Subscription(table: table, filter: table == "notes" && filter?.contains("price") == true ? nil : filter)
            }
        }
        let shops: [FieldValue] = [.text("s1"), .text("s2"), .null]
        let prices: [FieldValue] = [.real(0.5), .real(3), .integer(6), .null]
        for _ in 0..<200 {
            let ownSet = randomSet(), imposedSet = randomSet()
            let own = try Self.own(ownSet), imposed = try Self.imposed(imposedSet)
            let scope = own.narrowed(by: imposed, schema: Self.schema)
            let restricted = Set((imposedSet ?? []).map(\.table)).filter { table in !(imposedSet ?? []).contains { $0.table == table && $0.filter == nil } }
            for _ in 0..<20 {
                let table = (tables + ["other"]).randomElement(using: &random)!
                var fields: [String: FieldValue] = [:]
                if table != "other", Bool.random(using: &random) { fields["shop"] = shops.randomElement(using: &random)! }
                if table == "items", Bool.random(using: &random) { fields["price"] = prices.randomElement(using: &random)! }
                let key = RowKey.integer(Int64.random(in: 1...4, using: &random))
                let expected = own.holds(table, key: key, fields) && (!restricted.contains(table) || imposed.holds(table, key: key, fields))
                #expect(scope.holds(table, key: key, fields) == expected, "\(String(describing: ownSet)) ∩ \(String(describing: imposedSet)): \(table) \(key) \(fields)")
                let stored = try scope.holds(table, storedKey: key.encoded, storedFields: FieldValue.encodedFields(fields))
                #expect(stored == expected)
            }
        }
    }

    @Test func aWholePartitionStoresTokenCrossesTheWire() throws {
        let lineage = StoreLineage(uploadSalt: 7, integratedSeq: 0, lastSeq: 0, sent: [])
        for request in [
            SubscriptionRequest(held: nil, heldToken: 0x0102_0304_0506_0708, wanted: nil),
            SubscriptionRequest(held: nil, heldToken: 42, wanted: try SubscriptionSet([Subscription(table: "items")])),
            SubscriptionRequest(held: try SubscriptionSet([Subscription(table: "items")]), heldToken: 9, wanted: nil),
        ] {
            let message = ClientMessage.bind(BindRequest(session: 1, partition: "p", token: "t", identity: nil, lineage: lineage, subscriptions: request))
            #expect(try ClientMessage.decode(message.encoded()) == message)
        }
        // Without a token the bytes are those of before (no flag bit 2).
        var w = ByteWriter()
        SubscriptionRequest(held: nil, wanted: nil).encode(into: &w)
        #expect(w.bytes == [0])
        // A token of a whole-partition store and a held set at once is not a request.
        var r = ByteReader([5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
        #expect(throws: WireDecodeError.self) { try SubscriptionRequest.decode(from: &r) }
    }
}
