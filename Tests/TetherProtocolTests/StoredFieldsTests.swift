import Testing
import TetherProtocol
import TetherTestSupport

/// The server's state rows written byte for byte against the same rows decoded, applied by the
/// row-apply rules and encoded again.
@Suite struct StoredFieldsTests {
    /// What `change` does to the stored `row`, through the bytes of the change as received.
    static func inPlace(_ change: RowChange, to row: [UInt8]?) throws -> StoredFields.Outcome {
        let rows = ChangeRows(Changeset([change]))
        var stored = StoredFields.Change(columns: rows.columns)
        return try rows.withCursor { (cursor) throws -> StoredFields.Outcome in
            guard let (kind, _, _) = cursor.nextChange() else { Issue.record("no change"); return .unchanged }
            stored.read(&cursor)
            return try stored.apply(kind, to: row)
        }
    }

    /// The same, decoded: ``RowChange/write(rowExists:)`` and ``RowWrite/applied(to:)``.
    static func decoded(_ change: RowChange, to row: [UInt8]?) throws -> StoredFields.Outcome {
        let fields = try row.map { try FieldValue.decodeFields($0) }
        let write = change.write(rowExists: fields != nil)
        guard write != .unchanged else { return .unchanged }
        return write.applied(to: fields).map { .put(FieldValue.encodedFields($0)) } ?? .delete
    }

    @Test func writingInPlaceGivesTheBytesOfDecodingApplyingAndEncoding() throws {
        var rng = SeededRandom(seed: 2611)
        let names = ["a", "b", "id", "note", "total", "z_last", "aa"]
        let values: [FieldValue] = [.null, .integer(0), .integer(-7), .integer(.max), .real(1.5), .real(-0.0), .text(""), .text("é x"), .blob([]), .blob([0, 255])]
        func randomFields() -> [String: FieldValue] {
            var fields: [String: FieldValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &rng) { fields[names.randomElement(using: &rng)!] = values.randomElement(using: &rng)! }
            return fields
        }
        var kinds: [String: Int] = [:]
        for _ in 0..<5000 {
            let row = Bool.random(using: &rng) ? FieldValue.encodedFields(randomFields()) : nil
            let kind = [RowChange.Kind.insert, .update, .delete].randomElement(using: &rng)!
            let change = RowChange(table: "t", key: .text("k"), kind: kind, fields: randomFields())
            let expected = try Self.decoded(change, to: row)
            #expect(try Self.inPlace(change, to: row) == expected)
            kinds["\(expected)".prefix(3).description, default: 0] += 1
        }
        // Every outcome met many times.
        #expect(kinds.count == 3 && kinds.values.allSatisfy { $0 > 500 }, "\(kinds)")
    }

    @Test func aStoredRowThatDoesNotReadIsRefused() {
        let change = RowChange.update("t", .integer(1), ["a": .integer(1)])
        for bad: [UInt8] in [[1], [2, 1, 0x62, 0, 1, 0x61, 0], [1, 1, 0x61, 9]] {  // truncated, out of order, unknown tag
            #expect(throws: WireDecodeError.self) { try Self.inPlace(change, to: bad) }
        }
    }
}
