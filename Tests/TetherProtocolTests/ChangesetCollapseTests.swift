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

/// A server-side application of changes (docs/sync-model.md) to a state of rows of one table.
private func applied(_ changes: [RowChange], to state: [RowKey: [String: FieldValue]]) -> [RowKey: [String: FieldValue]] {
    var state = state
    for change in changes {
        switch change.kind {
        case .insert: state[change.key, default: [:]].merge(change.fields) { $1 }
        case .update: if state[change.key] != nil { state[change.key]!.merge(change.fields) { $1 } }
        case .delete: state[change.key] = nil
        }
    }
    return state
}

@Test func collapsedChangesetsHaveTheSameEffectOnAnyState() {
    // SplitMix64, seeded: a failure names the case that broke.
    var seed: UInt64 = 0x5EED
    func random(_ bound: Int) -> Int {
        seed &+= 0x9E37_79B9_7F4A_7C15
        var z = seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
    let columns = ["a", "b", "c"]
    for trial in 0..<2000 {
        var state: [RowKey: [String: FieldValue]] = [:]
        for key in 0..<3 where random(2) == 0 {
            state[.integer(Int64(key))] = Dictionary(uniqueKeysWithValues: columns.map { ($0, FieldValue.integer(Int64(random(3)))) })
        }
        let changes: [RowChange] = (0..<random(8)).map { _ in
            let key = RowKey.integer(Int64(random(3)))
            switch random(3) {
            case 0:  // captured inserts carry every column
                return .insert("t", key, Dictionary(uniqueKeysWithValues: columns.map { ($0, .integer(Int64(random(3)))) }))
            case 1:
                return .update("t", key, Dictionary(uniqueKeysWithValues: columns.filter { _ in random(2) == 0 }.map { ($0, .integer(Int64(random(3)))) }))
            default:
                return .delete("t", key)
            }
        }
        let collapsed = Changeset(changes).collapsed().changes
        #expect(applied(collapsed, to: state) == applied(changes, to: state), "trial \(trial)")
        #expect(Set(collapsed.map(\.key)).count == collapsed.count, "trial \(trial)")
    }
}
