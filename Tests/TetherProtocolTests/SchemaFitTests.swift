import Testing
import TetherProtocol

/// The one rule for what a store accepts, case by case (the agent's apply and the server's
/// upload check both use it).
@Suite struct SchemaFitTests {
    let schema = Schema(version: 3, tables: [
        TableSchema(name: "orders", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .text), ColumnSchema(name: "total", type: .real),
            ColumnSchema(name: "paid", type: .boolean), ColumnSchema(name: "note", type: .text, nullable: true),
        ])
    ])

    func problem(_ change: RowChange) -> SchemaFit.Problem? {
        do {
            _ = try SchemaFit.change(change, in: schema)
            return nil
        } catch {
            return error
        }
    }

    @Test func aCompleteInsertFitsAndIsNormalized() throws {
        let change = try SchemaFit.change(.insert("orders", .text("a"), ["total": .integer(3), "paid": .integer(1)]), in: schema)
        #expect(change.fields == ["total": .real(3), "paid": .integer(1)])
        #expect(problem(.insert("orders", .text("a"), ["id": .text("a"), "total": .real(1), "paid": .integer(0), "note": .null])) == nil)
    }

    @Test func everyProblem() {
        #expect(problem(.insert("nope", .text("a"), [:])) == .unknownTable(table: "nope"))
        #expect(problem(.insert("orders", .integer(1), ["total": .real(1), "paid": .integer(0)]))
            == .typeMismatch(table: "orders", column: "id", expected: "text", found: "integer"))
        #expect(problem(.update("orders", .text("a"), ["colour": .text("red")])) == .unknownColumn(table: "orders", column: "colour"))
        #expect(problem(.update("orders", .text("a"), ["paid": .integer(2)]))
            == .typeMismatch(table: "orders", column: "paid", expected: "boolean", found: "integer"))
        #expect(problem(.update("orders", .text("a"), ["total": .null])) == .missingValue(table: "orders", column: "total"))
        #expect(problem(.insert("orders", .text("a"), ["total": .real(1)])) == .missingValue(table: "orders", column: "paid"))
        #expect(problem(.update("orders", .text("a"), ["id": .text("b")]))
            == .typeMismatch(table: "orders", column: "id", expected: "the change's key", found: "a different key"))
    }

    @Test func updatesAndDeletesNeedNotBeComplete() {
        #expect(problem(.update("orders", .text("a"), ["note": .text("x")])) == nil)
        #expect(problem(.delete("orders", .text("a"))) == nil)
    }

    @Test func problemsNeverCarryValues() {
        let text = "\(SchemaFit.Problem.typeMismatch(table: "orders", column: "paid", expected: "boolean", found: FieldValue.text("secret").typeName))"
        #expect(!text.contains("secret"))
    }
}
