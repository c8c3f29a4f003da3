import Testing
import TetherProtocol
import TetherTOML

@Test func parsesTheSpecExample() throws {
    let schema = try Schema.parse(toml: """
        version = 1
        [tables.orders]
        primary_key = "id"
        [tables.orders.columns]
        id = "text"
        customer = "text"
        total = "real"
        note = "text?"
        """, file: "schema.toml")
    #expect(schema.version == 1)
    let orders = try #require(schema.table("orders"))
    #expect(orders.primaryKey == "id")
    #expect(orders.columns.map(\.name) == ["customer", "id", "note", "total"])
    #expect(orders.column("note") == ColumnSchema(name: "note", type: .text, nullable: true))
    #expect(orders.column("total")?.type == .real)
}

@Test func everyProblemNamesKeyAndLine() {
    let text = """
        version = 1
        [tables.orders]
        primary_key = "nope"
        colour = "red"
        [tables.orders.columns]
        id = "text"
        total = "money"
        """
    #expect {
        try Schema.parse(toml: text, file: "schema.toml")
    } throws: { error in
        let lines = (error as? ConfigError)?.problems.map(\.description) ?? []
        return lines.contains("schema.toml:4: tables.orders.colour: unknown key")
            && lines.contains { $0.hasPrefix("schema.toml:7: tables.orders.columns.total: unknown type \"money\"") }
            && lines.contains { $0.hasPrefix("schema.toml:3: tables.orders.primary_key:") && $0.contains("\"nope\"") }
    }
}

@Test func syntaxErrorNamesTheLine() {
    #expect {
        try Schema.parse(toml: "version = 1\n[tables.orders\n", file: "s.toml")
    } throws: { error in
        (error as? ConfigError)?.problems.first?.line == 2
    }
}
