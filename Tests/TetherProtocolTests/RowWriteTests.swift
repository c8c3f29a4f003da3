import Testing
import TetherProtocol

private let k = RowKey.integer(1)
private let row: [String: FieldValue] = ["a": .integer(1), "b": .text("x")]

@Suite struct RowWriteTests {
    /// Every (change kind, row present or not) pair.
    @Test(arguments: [
        // insert of a missing row creates it with the fields it carries
        (RowChange.insert("t", k, ["a": .integer(2)]), false, RowWrite.insert(["a": .integer(2)])),
        // insert over an existing row sets every field it carries (merge)
        (.insert("t", k, ["a": .integer(2)]), true, .update(["a": .integer(2)])),
        // update of an existing row sets the fields it carries
        (.update("t", k, ["b": .text("y")]), true, .update(["b": .text("y")])),
        // update of a missing row is ignored (a delete wins over a concurrent update)
        (.update("t", k, ["b": .text("y")]), false, .unchanged),
        // delete of an existing row removes it
        (.delete("t", k), true, .delete),
        // delete of a missing row does nothing
        (.delete("t", k), false, .unchanged),
    ] as [(RowChange, Bool, RowWrite)])
    func aChangeWritesItsRowByTheRules(change: RowChange, rowExists: Bool, expected: RowWrite) {
        #expect(change.write(rowExists: rowExists) == expected)
    }

    /// Every (write, row present or not) pair, on a state held as field maps.
    @Test(arguments: [
        (RowWrite.insert(["a": .integer(2)]), nil, ["a": .integer(2)]),
        // an update sets only the columns it carries: the others keep their values
        (.update(["a": .integer(2)]), row, ["a": .integer(2), "b": .text("x")]),
        (.update([:]), row, row),
        (.update(["b": .null]), row, ["a": .integer(1), "b": .null]),
        (.delete, row, nil),
        (.unchanged, nil, nil),
        (.unchanged, row, row),
    ] as [(RowWrite, [String: FieldValue]?, [String: FieldValue]?)])
    func aWriteGivesTheRowAfterIt(write: RowWrite, before: [String: FieldValue]?, after: [String: FieldValue]?) {
        #expect(write.applied(to: before) == after)
    }

    @Test func anInsertOverAnExistingRowMerges() {
        let change = RowChange.insert("t", k, ["a": .integer(2)])
        #expect(change.write(rowExists: true).applied(to: row) == ["a": .integer(2), "b": .text("x")])
    }

    /// The apply rules and the collapse rules (`RowChange.followed(by:)`) agree: applying two
    /// changes of one row in turn gives the row that applying their net effect gives, from
    /// every starting row. Inserts carry every column, as captured inserts do.
    @Test func applyingTwoChangesEqualsApplyingTheirNetEffect() {
        let changes: [RowChange] = [
            .insert("t", k, ["a": .integer(1), "b": .text("i")]),
            .insert("t", k, ["a": .null, "b": .text("j")]),
            .update("t", k, ["a": .integer(2)]),
            .update("t", k, ["b": .text("u")]),
            .update("t", k, [:]),
            .delete("t", k),
        ]
        func apply(_ change: RowChange, to row: [String: FieldValue]?) -> [String: FieldValue]? {
            change.write(rowExists: row != nil).applied(to: row)
        }
        for start in [nil, row] as [[String: FieldValue]?] {
            for first in changes {
                for second in changes {
                    let stepwise = apply(second, to: apply(first, to: start))
                    let net = apply(first.followed(by: second), to: start)
                    #expect(stepwise == net, "\(first.kind) then \(second.kind) from \(start == nil ? "no row" : "a row")")
                }
            }
        }
    }
}
