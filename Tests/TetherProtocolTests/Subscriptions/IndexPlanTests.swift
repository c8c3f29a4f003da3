import Testing
import TetherProtocol

/// ``IndexedValue``, ``IndexPlan`` and ``StateSelection``: the index bytes sort as filters compare,
/// and a plan finds every row its filter matches (a property over random filters and rows).
@Suite struct IndexPlanTests {
    static let schema = Schema(version: 1, tables: [
        TableSchema(name: "items", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "shop", type: .text, nullable: true),
            ColumnSchema(name: "price", type: .real, nullable: true), ColumnSchema(name: "qty", type: .integer, nullable: true),
        ]),
        TableSchema(name: "notes", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)]),
    ])
    static let indexed: [String: Set<String>] = ["items": ["shop", "price", "qty", "id"]]

    static func scope(_ filters: [String]) throws -> SubscriptionScope {
        try SubscriptionScope(
            resolving: SubscriptionSet(filters.map { Subscription(table: "items", filter: $0) }), schema: schema,
            parameters: FilterParameters(name: "t", tags: ["shop": "s1"]), now: 0)
    }

    @Test func bytesSortAsValuesCompare() {
        let ordered: [FieldValue] = [
            .real(-.infinity), .integer(-5), .real(-0.5), .integer(0), .real(0.25), .integer(3), .real(1e300), .real(.infinity),
            .text(""), .text("A"), .text("a"), .text("ab"), .text("é"), .blob([]), .blob([0]), .blob([1, 2]),
        ]
        for (i, a) in ordered.enumerated() {
            for (j, b) in ordered.enumerated() {
                let x = IndexedValue.encode(a)!, y = IndexedValue.encode(b)!
                #expect(x.lexicographicallyPrecedes(y) == (i < j), "\(a) \(b)")
            }
        }
        #expect(IndexedValue.encode(.integer(3)) == IndexedValue.encode(.real(3)), "an integer and a real of one value")
        #expect(IndexedValue.encode(.real(-0.0)) == IndexedValue.encode(.integer(0)))
        #expect(IndexedValue.encode(.null) == nil)
    }

    @Test func plansServeComparisonsAndRefuseWhatAnIndexCannotFind() throws {
        func plan(_ filter: String) throws -> IndexPlan? {
            guard case .candidates(let plan)? = StateSelection([try Self.scope([filter])], indexed: Self.indexed).tables?["items"] else { return nil }
            return plan
        }
        #expect(try plan("shop = {tag:shop}")?.ranges == [.init(column: "shop", low: IndexedValue.encode(.text("s1")), high: IndexedValue.encode(.text("s1")))])
        #expect(try plan("shop IN ('a', 'b', 'a')")?.ranges.count == 2)
        #expect(try plan("price > 5 AND shop = 'x'")?.columns == ["shop"], "an AND by its equality")
        #expect(try plan("price > 5 OR qty BETWEEN 1 AND 3")?.columns == ["price", "qty"])
        #expect(try plan("price > 5 OR NOT (qty = 1)") == nil, "an OR with an operand no index serves")
        #expect(try plan("shop != 'a'") == nil)
        #expect(try plan("shop IS NULL") == nil)
        #expect(try plan("id = 3") == nil, "the primary key is the row's key, never an indexed field")
        #expect(StateSelection([try Self.scope(["shop = 'a'"])], indexed: [:]).tables?["items"] == .all, "nothing indexed")
        let both = StateSelection([try Self.scope(["shop = 'a'"]), try Self.scope(["shop = 'b'"])], indexed: Self.indexed)
        guard case .candidates(let union)? = both.tables?["items"] else {
            Issue.record("two scopes' plans")
            return
        }
        #expect(union.ranges.count == 2 && both.tables?["notes"] == nil)
        #expect(StateSelection([try Self.scope(["shop = 'a'"]), .whole], indexed: Self.indexed).tables == nil)
        #expect(StateSelection.unserved(try Self.scope(["shop != 'a'", "qty = 1"]), indexed: Self.indexed) == ["items"])
    }

    @Test func exactPlansKeepStrictBoundsAndNameTheirLimits() throws {
        func plan(_ filter: String) throws -> IndexPlan? {
            guard case .candidates(let plan)? = StateSelection([try Self.scope([filter])], indexed: Self.indexed).tables?["items"] else { return nil }
            return plan
        }
        let two = IndexedValue.encode(.integer(2))!, three = IndexedValue.encode(.integer(3))!
        let below = try #require(try plan("price < 2"))
        #expect(below.exact && !below.ranges[0].contains(two) && below.ranges[0].contains(IndexedValue.encode(.real(1.5))!))
        let range = try #require(try plan("qty >= 2 AND qty < 3"))
        #expect(range.exact && range.ranges.count == 1 && range.ranges[0].contains(two) && !range.ranges[0].contains(three))
        #expect(try plan("qty > 2 AND qty >= 2")?.ranges.first?.contains(two) == false, "at an equal bound the exclusive one wins")
        #expect(try plan("shop IN ('a', 'b') OR price BETWEEN 1 AND 2")?.exact == true)
        #expect(try plan("price > 5 AND shop = 'x'")?.exact == false, "an AND of two columns finds more than it matches")
        #expect(try plan("qty > 2 AND (qty < 9 OR qty = 20)")?.exact == false)
        #expect(try plan("qty = 9007199254740993")?.exact == false, "an integer beyond 2^53 shares its index bytes")
        #expect(try plan("qty = 9007199254740991")?.exact == true)
    }

    /// A change reads no table both scopes hold alike, and of a table filtered by exact plans on
    /// both sides only the rows one plan finds and the other does not.
    @Test func aChangeReadsOnlyWhatCanMove() throws {
        let whole = try SubscriptionScope(
            resolving: SubscriptionSet([Subscription(table: "items", filter: "price < 2"), Subscription(table: "notes", filter: nil)]),
            schema: Self.schema, parameters: FilterParameters(name: "t", tags: [:]), now: 0)
        let moved = try SubscriptionScope(
            resolving: SubscriptionSet([Subscription(table: "items", filter: "price < 3"), Subscription(table: "notes", filter: nil)]),
            schema: Self.schema, parameters: FilterParameters(name: "t", tags: [:]), now: 0)
        let change = StateSelection(changingFrom: whole, to: moved, indexed: Self.indexed)
        guard case .candidates(let between)? = change.tables?["items"] else {
            Issue.record("an exact change of one column: \(change)")
            return
        }
        let two = IndexedValue.encode(.integer(2))!, three = IndexedValue.encode(.integer(3))!
        #expect(between.ranges == [.init(column: "price", low: two, high: three, lowInclusive: true, highInclusive: false)])
        #expect(change.tables?["notes"] == nil, "notes is held whole by both")
        let columns = StateSelection(changingFrom: try Self.scope(["shop = 'a'"]), to: try Self.scope(["price < 3"]), indexed: Self.indexed)
        guard case .changed(let from, let to)? = columns.tables?["items"] else {
            Issue.record("an exact change of two columns: \(columns)")
            return
        }
        #expect(from.columns == ["shop"] && to.columns == ["price"])
        #expect(StateSelection(changingFrom: moved, to: moved, indexed: Self.indexed).tables == [:])
        #expect(StateSelection(changingFrom: .whole, to: .whole, indexed: Self.indexed).tables == [:])
        let inexact = StateSelection(changingFrom: try Self.scope(["price < 2 AND shop = 'x'"]), to: try Self.scope(["price < 3"]), indexed: Self.indexed)
        guard case .candidates(let union)? = inexact.tables?["items"] else {
            Issue.record("an inexact change reads the union: \(inexact)")
            return
        }
        #expect(union.ranges.count == 2)
        #expect(StateSelection(changingFrom: try Self.scope(["shop != 'a'"]), to: try Self.scope(["price < 3"]), indexed: Self.indexed).tables?["items"] == .all)
        #expect(StateSelection(changingFrom: try Self.scope(["price < 3"]), to: .whole, indexed: Self.indexed).tables == nil)
    }

    /// For random exact plans of one column and random values: the difference's ranges hold a
    /// value exactly when one plan finds it and the other does not.
    @Test func theDifferenceOfTwoPlansHoldsWhatExactlyOneFinds() throws {
        var random = SystemRandomNumberGenerator()
        let values: [FieldValue] = (-3...12).map { .integer($0) } + [.real(2.5), .real(-0.5), .text(""), .text("a"), .text("b"), .blob([])]
        let leaves = [
            "qty < 3", "qty <= 3", "qty > 5", "qty >= 5", "qty = 4", "qty IN (0, 7, 9)", "qty BETWEEN 2 AND 8", "qty > 11", "qty <= -3",
            "qty >= 1 AND qty < 4", "qty > 2 AND qty <= 2", "qty < 10 AND qty > 6",
        ]
        func filter() -> String {
            (0..<Int.random(in: 1...3, using: &random)).map { _ in leaves.randomElement(using: &random)! }.joined(separator: " OR ")
        }
        for _ in 0..<500 {
            let (x, y) = (filter(), filter())
            guard case .candidates(let a)? = StateSelection([try Self.scope([x])], indexed: Self.indexed).tables?["items"],
                case .candidates(let b)? = StateSelection([try Self.scope([y])], indexed: Self.indexed).tables?["items"]
            else {
                Issue.record("\(x) / \(y) not served")
                continue
            }
            let difference = try #require(IndexPlan.symmetricDifference(a, b), "\(x) / \(y)")
            for value in values {
                let bytes = IndexedValue.encode(value)!
                let (inA, inB) = (a.ranges.contains { $0.contains(bytes) }, b.ranges.contains { $0.contains(bytes) })
                let inDifference = difference.ranges.filter { $0.contains(bytes) }
                #expect(inDifference.count == (inA != inB ? 1 : 0), "\(value): \(x) → \(inA), \(y) → \(inB), difference \(difference.ranges)")
            }
        }
        #expect(IndexPlan.symmetricDifference(IndexPlan(ranges: [], exact: false), IndexPlan(ranges: [], exact: true)) == nil)
    }

    /// For random filters and rows: every row a filter matches is among the candidates its plan
    /// finds, and an exact plan finds no other.
    @Test func aPlanFindsEveryMatchingRow() throws {
        var random = SystemRandomNumberGenerator()
        // With values on the filters' bounds, and of another type than the column's (SQLite keeps them).
        let shops: [FieldValue] = [.text("s1"), .text("s2"), .text(""), .text("s10"), .null, .integer(5), .blob([1])]
        let prices: [FieldValue] = [.real(1.5), .real(50), .real(-3), .real(0), .integer(3), .real(2), .integer(2), .null, .text("2")]
        let quantities: [FieldValue] = [.integer(3), .integer(7), .integer(-1), .real(3), .null, .text("3"), .real(3.5)]
        let leaves = [
            "shop = 's1'", "shop IN ('s2', 's10')", "shop > 's1'", "shop <= 's10'", "shop BETWEEN '' AND 's1'", "shop = {tag:shop}",
            "price < 2", "price >= 3", "price BETWEEN -5 AND 1.5", "price = 3", "qty = 3", "qty IN (7, -1)", "qty > 3", "qty <= -1",
            "price > 1.5", "qty < 3", "qty >= 3 AND qty < 7", "price > -3 AND price <= 2",
            "shop != 's1'", "price IS NULL", "NOT (qty = 3)",
        ]
        func filter(_ depth: Int) -> String {
            guard depth > 0, Int.random(in: 0..<3, using: &random) > 0 else { return leaves.randomElement(using: &random)! }
            let op = Bool.random(using: &random) ? " AND " : " OR "
            return "(" + filter(depth - 1) + op + filter(depth - 1) + ")"
        }
        var planned = 0, exactChecked = 0
        for _ in 0..<300 {
            let text = filter(3)
            let scope = try Self.scope([text])
            guard case .candidates(let plan)? = StateSelection([scope], indexed: Self.indexed).tables?["items"] else { continue }
            planned += 1
            for _ in 0..<40 {
                let fields: [String: FieldValue] = [
                    "shop": shops.randomElement(using: &random)!, "price": prices.randomElement(using: &random)!,
                    "qty": quantities.randomElement(using: &random)!,
                ]
                let found = plan.ranges.contains { range in
                    IndexedValue.encode(fields[range.column] ?? .null).map(range.contains) ?? false
                }
                guard scope.holds("items", key: .integer(1), fields) else {
                    #expect(!(plan.exact && found), "\(text) does not match \(fields) but its exact plan finds it")
                    if plan.exact { exactChecked += 1 }
                    continue
                }
                #expect(found, "\(text) matches \(fields) but its plan does not find it")
            }
        }
        #expect(planned > 50 && exactChecked > 50)
    }
}
