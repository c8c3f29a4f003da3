import Testing
import TetherProtocol

private let k = RowKey.integer(1)
private let insert = RowChange.insert("t", k, ["a": .integer(1), "b": .integer(1)])
private let update = RowChange.update("t", k, ["a": .integer(2), "b": .integer(2)])
private let delete = RowChange.delete("t", k)
private let localInsert = RowChange.insert("t", k, ["a": .integer(9), "b": .integer(9)])
private let localUpdate = RowChange.update("t", k, ["a": .integer(9)])
private let localDelete = RowChange.delete("t", k)

/// Every (downloaded change, pending local change, row present or not) triple.
@Suite struct DownloadWriteTests {
    static let applied: [(RowChange, RowChange?, Bool, DownloadWrite)] = [
        // Without pending local changes: the row-apply rules.
        (insert, nil, false, DownloadWrite(write: .insert(insert.fields))),
        (insert, nil, true, DownloadWrite(write: .update(insert.fields))),
        (update, nil, false, DownloadWrite(write: .unchanged)),
        (update, nil, true, DownloadWrite(write: .update(update.fields))),
        (delete, nil, false, DownloadWrite(write: .unchanged)),
        (delete, nil, true, DownloadWrite(write: .delete)),
        // A pending local update: its fields keep their local values, the rest is written; a
        // row the server re-creates gets the local fields with it.
        (insert, localUpdate, false, DownloadWrite(write: .insert(["a": .integer(9), "b": .integer(1)]), fieldsKeptLocal: 1)),
        (insert, localUpdate, true, DownloadWrite(write: .update(["b": .integer(1)]), fieldsKeptLocal: 1)),
        (update, localUpdate, false, DownloadWrite(write: .unchanged, fieldsKeptLocal: 1)),
        (update, localUpdate, true, DownloadWrite(write: .update(["b": .integer(2)]), fieldsKeptLocal: 1)),
        // A server delete wins over a pending local update (the server ignores the update too).
        (delete, localUpdate, false, DownloadWrite(write: .unchanged)),
        (delete, localUpdate, true, DownloadWrite(write: .delete)),
        // A delete of a row the store deleted too.
        (delete, localDelete, false, DownloadWrite(write: .unchanged)),
        (delete, localDelete, true, DownloadWrite(write: .delete)),
    ]

    static let skipped: [(RowChange, RowChange?, Bool, DownloadWrite)] = [true, false].flatMap { exists in
        [
            // The local insert re-creates the row later.
            (delete, localInsert, exists, DownloadWrite(write: .unchanged, isSkipped: true)),
            // The local delete removes the row later.
            (insert, localDelete, exists, DownloadWrite(write: .unchanged, isSkipped: true)),
            (update, localDelete, exists, DownloadWrite(write: .unchanged, isSkipped: true)),
            // The local insert sets every field later.
            (insert, localInsert, exists, DownloadWrite(write: .unchanged, isSkipped: true, fieldsKeptLocal: 2)),
            (update, localInsert, exists, DownloadWrite(write: .unchanged, isSkipped: true, fieldsKeptLocal: 2)),
        ]
    }

    @Test(arguments: applied + skipped)
    func aDownloadedChangeYieldsToPendingLocalChanges(change: RowChange, pending: RowChange?, rowExists: Bool, expected: DownloadWrite) {
        #expect(change.write(rowExists: rowExists, pending: pending) == expected)
    }

    @Test func everyTripleIsCovered() {
        let covered = Set((Self.applied + Self.skipped).map { "\($0.0.kind) \($0.1.map { "\($0.kind)" } ?? "none") \($0.2)" })
        #expect(covered.count == 3 * 4 * 2)
    }
}
