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

    /// For random filters and rows: every row a filter matches is among the candidates its plan finds.
    @Test func aPlanFindsEveryMatchingRow() throws {
        var random = SystemRandomNumberGenerator()
        let shops: [FieldValue] = [.text("s1"), .text("s2"), .text(""), .text("s10"), .null]
        let prices: [FieldValue] = [.real(1.5), .real(50), .real(-3), .real(0), .integer(3), .null]
        let quantities: [FieldValue] = [.integer(3), .integer(7), .integer(-1), .real(3), .null]
        let leaves = [
            "shop = 's1'", "shop IN ('s2', 's10')", "shop > 's1'", "shop <= 's10'", "shop BETWEEN '' AND 's1'", "shop = {tag:shop}",
            "price < 2", "price >= 3", "price BETWEEN -5 AND 1.5", "price = 3", "qty = 3", "qty IN (7, -1)", "qty > 3", "qty <= -1",
            "shop != 's1'", "price IS NULL", "NOT (qty = 3)",
        ]
        func filter(_ depth: Int) -> String {
            guard depth > 0, Int.random(in: 0..<3, using: &random) > 0 else { return leaves.randomElement(using: &random)! }
            let op = Bool.random(using: &random) ? " AND " : " OR "
            return "(" + filter(depth - 1) + op + filter(depth - 1) + ")"
        }
        var planned = 0
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
                guard scope.holds("items", key: .integer(1), fields) else { continue }
                let found = plan.ranges.contains { range in
                    IndexedValue.encode(fields[range.column] ?? .null).map(range.contains) ?? false
                }
                #expect(found, "\(text) matches \(fields) but its plan does not find it")
            }
        }
        #expect(planned > 50)
    }
}
