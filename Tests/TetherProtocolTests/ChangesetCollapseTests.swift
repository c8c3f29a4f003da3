import Testing
import TetherProtocol

private let k = RowKey.text("A")

@Test(arguments: [
    // update+update → one update, last value per field
    ([RowChange.update("t", k, ["a": .integer(1), "b": .integer(1)]), .update("t", k, ["a": .integer(2)])],
     RowChange.update("t", k, ["a": .integer(2), "b": .integer(1)])),
    // insert+update → insert with the updated fields
    ([.insert("t", k, ["a": .integer(1), "b": .integer(1)]), .update("t", k, ["b": .integer(5)])],
     .insert("t", k, ["a": .integer(1), "b": .integer(5)])),
    // insert+delete → delete
    ([.insert("t", k, ["a": .integer(1)]), .delete("t", k)], .delete("t", k)),
    // update+delete → delete
    ([.update("t", k, ["a": .integer(1)]), .delete("t", k)], .delete("t", k)),
    // delete+insert → insert
    ([.delete("t", k), .insert("t", k, ["a": .integer(3)])], .insert("t", k, ["a": .integer(3)])),
    // delete+update → delete (the update of a missing row is ignored)
    ([.delete("t", k), .update("t", k, ["a": .integer(3)])], .delete("t", k)),
    // insert+insert (INSERT OR REPLACE) → insert, later fields win
    ([.insert("t", k, ["a": .integer(1), "b": .null]), .insert("t", k, ["a": .integer(2), "b": .text("x")])],
     .insert("t", k, ["a": .integer(2), "b": .text("x")])),
    // insert, delete, insert, update → insert
    ([.insert("t", k, ["a": .integer(1)]), .delete("t", k), .insert("t", k, ["a": .integer(2)]), .update("t", k, ["a": .integer(4)])],
     .insert("t", k, ["a": .integer(4)])),
] as [([RowChange], RowChange)])
func collapsesOneRowToItsNetEffect(changes: [RowChange], expected: RowChange) {
    #expect(Changeset(changes).collapsed().changes == [expected])
}

@Test func collapsingKeepsRowsApartAndInFirstAppearanceOrder() {
    let changes: [RowChange] = [
        .insert("t", .integer(1), ["a": .integer(1)]),
        .update("u", .integer(1), ["a": .integer(1)]),
        .update("t", .integer(1), ["a": .integer(2)]),
        .delete("t", .integer(2)),
        .update("u", .integer(1), ["b": .integer(1)]),
    ]
    #expect(Changeset(changes).collapsed().changes == [
        .insert("t", .integer(1), ["a": .integer(2)]),
        .update("u", .integer(1), ["a": .integer(1), "b": .integer(1)]),
        .delete("t", .integer(2)),
    ])
}
