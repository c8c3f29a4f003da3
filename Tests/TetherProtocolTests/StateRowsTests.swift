import Testing
import TetherProtocol

/// State rows read in place (the agent's side) and built from stored rows without decoding
/// their values (the server's side).
@Suite struct StateRowsTests {
    static let schema = Schema(version: 1, tables: [
        TableSchema(name: "orders", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .text), ColumnSchema(name: "total", type: .real),
            ColumnSchema(name: "note", type: .text, nullable: true), ColumnSchema(name: "photo", type: .blob, nullable: true),
        ]),
        TableSchema(name: "items", primaryKey: "sku", columns: [
            ColumnSchema(name: "sku", type: .integer), ColumnSchema(name: "name", type: .text),
        ]),
    ])

    static let rows = Changeset([
        .insert("orders", .text("o-1"), ["total": .real(12.5), "note": .text("grüße"), "photo": .blob([])]),
        .insert("orders", .text(""), ["total": .integer(-3), "note": .text(""), "photo": .null]),
        .insert("items", .integer(-9_000_000_000), ["name": .text("x")]),
    ])

    /// Every row and field as the cursor reads them.
    static func read(_ rows: StateRows) -> [RowChange] {
        rows.withCursor { cursor in
            var changes: [RowChange] = []
            while let (table, key) = cursor.nextRow() {
                var fields: [String: FieldValue] = [:]
                while cursor.fieldsLeft > 0 {
                    let (column, value) = cursor.nextField()
                    fields[rows.columns[column]] = value.fieldValue
                }
                changes.append(.insert(rows.tables[table], RowKey(key.fieldValue)!, fields))
            }
            return changes
        }
    }

    @Test func theCursorReadsEveryValueAsTheChangesetHasIt() throws {
        let rows = StateRows(Self.rows)
        #expect(rows.count == 3)
        #expect(Self.read(rows) == Self.rows.changes)
        #expect(rows.changeset == Self.rows)
        var writer = ByteWriter()
        rows.encode(into: &writer)
        #expect(writer.bytes == Self.rows.encoded, "the same bytes as the changeset encoding")
        // Decoded from the wire, the rows are read where they are in the message.
        let decoded = try StateRows.decode(Self.rows.encoded)
        #expect(decoded == rows && Self.read(decoded) == Self.rows.changes)
    }

    @Test func aRowThatIsNotAnInsertIsRefused() {
        for change in [RowChange.update("orders", .text("a"), ["total": .real(1)]), .delete("orders", .text("a"))] {
            #expect(throws: WireDecodeError.self) { try StateRows.decode(Changeset([change]).encoded, insertsOnly: true) }
        }
    }

    @Test func aFieldSetTwiceAndInvalidUTF8AreRefused() {
        // tables [t], columns [a], one insert into t, key integer 1, two fields both column 0.
        let twice: [UInt8] = [1, 1, 0x74, 1, 1, 0x61, 1, 0, 0, 1, 2, 2, 0, 0, 0, 0]
        #expect(throws: WireDecodeError.self) { try StateRows.decode(twice) }
        let once: [UInt8] = [1, 1, 0x74, 1, 1, 0x61, 1, 0, 0, 1, 2, 1, 0, 0]
        #expect((try? StateRows.decode(once))?.count == 1)
        // A text value of one byte 0xFF; then a text key of an unfinished two-byte sequence.
        let badValue: [UInt8] = [1, 1, 0x74, 1, 1, 0x61, 1, 0, 0, 1, 2, 1, 0, 3, 1, 0xFF]
        #expect(throws: WireDecodeError.self) { try StateRows.decode(badValue) }
        let badKey: [UInt8] = [1, 1, 0x74, 0, 1, 0, 0, 3, 1, 0xC3, 0]
        #expect(throws: WireDecodeError.self) { try StateRows.decode(badKey) }
        let goodKey: [UInt8] = [1, 1, 0x74, 0, 1, 0, 0, 3, 2, 0xC3, 0xA9, 0]
        #expect((try? StateRows.decode(goodKey))?.changeset.changes.first?.key == .text("é"))
    }

    @Test func theBuilderPassesStoredBytesThroughAndAddsMissingNullableColumns() throws {
        var builder = StateRowsBuilder(schema: Self.schema)
        try builder.append(table: "orders", key: RowKey.text("o-1").encoded, fields: FieldValue.encodedFields(["total": .real(1), "note": .text("n")]))
        try builder.append(table: "items", key: RowKey.integer(7).encoded, fields: FieldValue.encodedFields(["name": .text("seven")]))
        try builder.append(table: "orders", key: RowKey.text("o-2").encoded, fields: FieldValue.encodedFields(["photo": .blob([1]), "total": .real(2)]))
        // A table the schema no longer has is passed on as stored (the agent refuses it).
        try builder.append(table: "gone", key: RowKey.integer(1).encoded, fields: FieldValue.encodedFields([:]))
        let rows = builder.build()
        #expect(rows.count == 4 && builder.count == 4)
        #expect(rows.changeset.changes == [
            .insert("orders", .text("o-1"), ["total": .real(1), "note": .text("n"), "photo": .null]),
            .insert("items", .integer(7), ["name": .text("seven")]),
            .insert("orders", .text("o-2"), ["total": .real(2), "note": .null, "photo": .blob([1])]),
            .insert("gone", .integer(1), [:]),
        ])
        // What the builder makes is what a client accepts.
        var writer = ByteWriter()
        rows.encode(into: &writer)
        #expect(try StateRows.decode(writer.bytes) == rows)
        #expect(Self.read(rows) == rows.changeset.changes)
    }

    @Test func theBuilderRefusesStoredRowsItCannotRead() {
        var builder = StateRowsBuilder(schema: Self.schema)
        let fields = FieldValue.encodedFields(["total": .real(1)])
        #expect(throws: WireDecodeError.self) { try builder.append(table: "orders", key: [9, 1], fields: fields) }
        #expect(throws: WireDecodeError.self) { try builder.append(table: "orders", key: RowKey.text("a").encoded, fields: Array(fields.dropLast())) }
        #expect(throws: WireDecodeError.self) {
            try builder.append(table: "orders", key: RowKey.text("a").encoded, fields: [2, 5] + Array("total".utf8) + [0, 5] + Array("total".utf8) + [0])
        }
    }
}
