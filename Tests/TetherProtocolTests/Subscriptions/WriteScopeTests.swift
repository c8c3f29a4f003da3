import Testing
import TetherProtocol

/// ``WriteScope``: subscriptions and write rules together, as uploads and heal views are checked.
@Suite struct WriteScopeTests {
    static let schema = Schema(version: 1, tables: [
        TableSchema(name: "items", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "shop", type: .text), ColumnSchema(name: "price", type: .real),
        ]),
        TableSchema(name: "notes", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)]),
    ])

    static func scope(_ filter: String) throws -> SubscriptionScope {
        try SubscriptionScope(
            resolving: SubscriptionSet([Subscription(table: "items", filter: filter)]), schema: schema,
            parameters: FilterParameters(name: "till", tags: ["shop": "s1"]), now: 0)
    }

    static func rules(_ filter: String?, readOnly: Set<String> = []) throws -> WriteRules {
        let table = schema.table("items")!
        let resolved = try filter.map { try SubscriptionFilter($0, table: table).resolved(with: FilterParameters(name: "till"), now: 0, schema: table) }
        return WriteRules(tables: ["items": [WriteRules.Rule(filter: resolved, readOnly: readOnly)]], primaryKeys: ["items": "id"])
    }

    @Test func theSubscriptionsAndTheRulesEachRefuse() throws {
        let scope = WriteScope(read: try Self.scope("shop = {tag:shop}"), rules: try Self.rules("id < 100", readOnly: ["price"]))
        let row: [String: FieldValue] = ["shop": .text("s1"), "price": .real(1)]
        #expect(scope.refusal(of: .insert, table: "items", key: .integer(1), before: nil, after: row) == nil)
        #expect(scope.refusal(of: .insert, table: "items", key: .integer(1), before: nil, after: ["shop": .text("s2"), "price": .real(1)])?.reason == .outsideSubscriptions)
        #expect(scope.refusal(of: .insert, table: "notes", key: .integer(1), before: nil, after: [:])?.reason == .outsideSubscriptions)
        #expect(scope.refusal(of: .insert, table: "items", key: .integer(100), before: nil, after: row)?.reason == .writeRule, "the rule names the key")
        let repriced = scope.refusal(of: .update, table: "items", key: .integer(1), before: row, after: ["shop": .text("s1"), "price": .real(2)])
        #expect(repriced?.reason == .readOnlyColumn && repriced?.message.contains("price") == true)
        #expect(scope.refusal(of: .delete, table: "items", key: .integer(1), before: row, after: nil) == nil)
        #expect(WriteScope.whole.refusal(of: .insert, table: "notes", key: .integer(1), before: nil, after: [:]) == nil)
    }

    @Test func aRefusingRuleAndAnotherGrantsRuleAllow() throws {
        let table = Self.schema.table("items")!
        let cheap = try SubscriptionFilter("price < 10", table: table).resolved(with: FilterParameters(name: "t"), now: 0, schema: table)
        let rules = WriteRules(
            tables: ["items": [WriteRules.Rule(filter: nil, refuseAll: true), WriteRules.Rule(filter: cheap)]], primaryKeys: ["items": "id"])
        #expect(rules.refusal(of: .insert, table: "items", key: .integer(1), before: nil, after: ["price": .real(5)]) == nil)
        #expect(rules.refusal(of: .insert, table: "items", key: .integer(1), before: nil, after: ["price": .real(50)])?.reason == .writeRule)
    }

    @Test func aHealViewVouchesOnlyForRowsTheScopeHoldsAndWrites() throws {
        let scope = WriteScope(read: try Self.scope("shop = {tag:shop}"), rules: try Self.rules("id < 100"))
        let view = Changeset([
            .insert("items", .integer(1), ["shop": .text("s1"), "price": .real(1)]),
            .insert("items", .integer(2), ["shop": .text("s2"), "price": .real(1)]),
            .insert("items", .integer(200), ["shop": .text("s1"), "price": .real(1)]),
            .delete("items", .integer(3)),
            .insert("notes", .integer(4), [:]),
        ])
        let (rows, unknown) = scope.vouched(view)
        #expect(rows.changes.map(\.key) == [.integer(1)])
        #expect(unknown.changes == [.delete("items", .integer(3))], "an absent row is unknown, not deleted")
        #expect(WriteScope.whole.vouched(view).rows == view)
    }
}
