import Testing
import TetherProtocol
import TetherTestSupport

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

    /// What the check of changes read in place says of `change`.
    func problemInPlace(_ change: RowChange) -> SchemaFit.Problem? {
        do {
            try SchemaFit.check(ChangeRows(Changeset([change])), in: schema)
            return nil
        } catch {
            return error
        }
    }

    /// The check of changes read in place (uploads on the server, downloads and state rows on
    /// the agent) says what the check of decoded changes says: random changes, right and wrong
    /// in every way, one or two fields each (with two wrong fields either may be named).
    @Test func theCheckInPlaceAgreesWithTheCheckOfDecodedChanges() {
        var rng = SeededRandom(seed: 15)
        let values: [FieldValue] = [.null, .integer(0), .integer(1), .integer(2), .real(1.5), .text("a"), .text(""), .blob([1])]
        let names = ["id", "total", "paid", "note", "colour"]
        var refused = 0
        for _ in 0..<5000 {
            let kind = [RowChange.Kind.insert, .update, .delete].randomElement(using: &rng)!
            let table = Int.random(in: 0..<20, using: &rng) == 0 ? "nope" : "orders"
            let key: RowKey = Int.random(in: 0..<10, using: &rng) == 0 ? .integer(1) : .text(["a", "b"].randomElement(using: &rng)!)
            var fields: [String: FieldValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let name = names.randomElement(using: &rng)!
                fields[name] = name == "id" && Bool.random(using: &rng) ? key.fieldValue : values.randomElement(using: &rng)!
            }
            let change = RowChange(table: table, key: key, kind: kind, fields: fields)
            let decoded = problem(change)
            let inPlace = problemInPlace(change)
            #expect((decoded == nil) == (inPlace == nil), "\(change): \(String(describing: decoded)) / \(String(describing: inPlace))")
            if fields.count <= 1 { #expect(decoded == inPlace) }
            if decoded != nil { refused += 1 }
        }
        #expect(refused > 500 && refused < 4500)
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
