import Testing
import TetherProtocol

private let orders = TableSchema(name: "orders", primaryKey: "id", columns: [
    ColumnSchema(name: "id", type: .text),
    ColumnSchema(name: "customer", type: .text),
    ColumnSchema(name: "total", type: .real),
    ColumnSchema(name: "note", type: .text, nullable: true),
])
private let base = Schema(version: 1, tables: [orders])

private func with(_ edit: (inout TableSchema) -> Void) -> Schema {
    var table = orders
    edit(&table)
    return Schema(version: 2, tables: [table])
}

@Test func identicalSchemasHaveNoDifference() {
    let diff = SchemaDiff(from: base, to: base)
    #expect(diff.isEmpty)
    #expect(!diff.isBreaking)
}

@Test func addingATableIsNotBreaking() {
    let items = TableSchema(name: "items", primaryKey: "sku", columns: [ColumnSchema(name: "sku", type: .integer)])
    let diff = SchemaDiff(from: base, to: Schema(version: 2, tables: [orders, items]))
    #expect(diff.differences == [.tableAdded("items")])
    #expect(!diff.isBreaking)
}

@Test(arguments: [
    (true, false),  // nullable column added: non-breaking
    (false, true),  // required column added: breaking
])
func addingAColumn(nullable: Bool, breaking: Bool) {
    let diff = SchemaDiff(from: base, to: with { $0.columns.append(ColumnSchema(name: "tip", type: .real, nullable: nullable)) })
    #expect(diff.differences.count == 1)
    #expect(diff.isBreaking == breaking)
    #expect(diff.summary[0].contains("orders.tip"))
}

@Test func everyOtherChangeIsBreaking() {
    let cases: [(Schema, String)] = [
        (Schema(version: 2, tables: []), "table orders removed"),
        (with { $0.columns.removeAll { $0.name == "note" } }, "column orders.note removed"),
        (with { $0.columns = $0.columns.map { $0.name == "total" ? ColumnSchema(name: "total", type: .text) : $0 } },
         "column orders.total changed from real to text"),
        (with { $0.columns = $0.columns.map { $0.name == "note" ? ColumnSchema(name: "note", type: .text) : $0 } },
         "column orders.note changed from text? to text"),
        (with { $0.primaryKey = "customer" }, "primary key of orders changed from id to customer"),
    ]
    for (schema, text) in cases {
        let diff = SchemaDiff(from: base, to: schema)
        #expect(diff.isBreaking, "\(text)")
        #expect(diff.summary.contains { $0.hasPrefix(text) }, "\(diff.summary) should mention \(text)")
    }
}

@Test func schemaProblemsNameTableAndColumn() {
    let bad = Schema(version: 0, tables: [
        TableSchema(name: "_tether_x", primaryKey: "nope", columns: [ColumnSchema(name: "a b", type: .text)]),
        TableSchema(name: "t", primaryKey: "r", columns: [ColumnSchema(name: "r", type: .real, nullable: true)]),
    ])
    let problems = bad.problems()
    #expect(problems.contains { $0.hasPrefix("version:") })
    #expect(problems.contains { $0.contains("tables._tether_x: table name") && $0.contains("reserved") })
    #expect(problems.contains { $0.contains("tables._tether_x.columns.a b") })
    #expect(problems.contains { $0.contains("tables._tether_x.primary_key") && $0.contains("not one of") })
    #expect(problems.contains { $0.contains("tables.t.primary_key") && $0.contains("must be integer or text") })
    #expect(problems.contains { $0.contains("tables.t.primary_key") && $0.contains("nullable") })
    #expect(base.problems().isEmpty)
}
