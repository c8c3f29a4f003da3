/// A server's state row as stored: ``FieldValue/encodedFields(_:)`` — the field count, then
/// each field's name and value, sorted by name. ``apply(_:fields:columns:to:)`` writes a change
/// read in place (``ChangeRows``) into it byte for byte, by the row-apply rules
/// (``RowChange/write(rowExists:)`` and ``RowWrite/applied(to:)``): no dictionary, `String` or
/// ``FieldValue`` per field, and the same bytes as decoding, applying and encoding again.
package enum StoredFields {
    /// A changes' column dictionary as the merge needs it: each name's bytes and its rank in
    /// name order (schema names are ASCII, so byte order is `String` order).
    package struct Columns: Sendable {
        let names: [[UInt8]]
        let rank: [Int]

        init(_ columns: [String]) {
            let names = columns.map { Array($0.utf8) }
            var rank = [Int](repeating: 0, count: columns.count)
            for (position, index) in names.indices.sorted(by: { names[$0].lexicographicallyPrecedes(names[$1]) }).enumerated() {
                rank[index] = position
            }
            self.names = names
            self.rank = rank
        }
    }

    /// What a change does to a stored row.
    package enum Outcome: Sendable, Equatable {
        /// Nothing (an update or a delete of a row that is absent).
        case unchanged
        /// The row as it is to be stored now.
        case put([UInt8])
        /// The row is to be removed.
        case delete
    }

    /// A change's fields as read where they are (valid inside the cursor's `withCursor`), to
    /// apply to a stored row; one buffer, reused change after change.
    package struct Change {
        package let columns: Columns
        private var fields: [(column: Int, value: UnsafeBufferPointer<UInt8>)] = []

        /// For the changes of one ``ChangeRows`` (`columns`: its column dictionary).
        package init(columns: [String]) { self.columns = Columns(columns) }

        /// Reads the fields of the change the cursor is at.
        package mutating func read(_ cursor: inout ChangeRows.Cursor) {
            fields.removeAll(keepingCapacity: true)
            while cursor.fieldsLeft > 0 { fields.append(cursor.nextEncodedField()) }
        }

        /// The change of `kind` with the fields read last, applied to the stored `row` (nil:
        /// absent). Throws when `row` is not a stored row.
        package func apply(_ kind: RowChange.Kind, to row: [UInt8]?) throws(WireDecodeError) -> Outcome {
            try StoredFields.apply(kind, fields: fields, columns: columns, to: row)
        }
    }

    /// The change of `kind` carrying `fields` (columns of `columns`, values as encoded, in any
    /// order) applied to the stored `row` (nil: absent). Throws when `row` is not a stored row.
    static func apply(
        _ kind: RowChange.Kind, fields: [(column: Int, value: UnsafeBufferPointer<UInt8>)], columns: Columns, to row: [UInt8]?
    ) throws(WireDecodeError) -> Outcome {
        guard let row else {
            // An insert creates the row with the fields it carries; the rest do nothing.
            return kind == .insert ? .put(encode(sorted(fields, columns), columns: columns)) : .unchanged
        }
        if kind == .delete { return .delete }
        // An insert of an existing key or an update: the fields set, the others kept.
        return .put(try merge(row, sorted(fields, columns), columns: columns))
    }

    private static func sorted(
        _ fields: [(column: Int, value: UnsafeBufferPointer<UInt8>)], _ columns: Columns
    ) -> [(column: Int, value: UnsafeBufferPointer<UInt8>)] {
        fields.sorted { columns.rank[$0.column] < columns.rank[$1.column] }
    }

    private static func encode(_ fields: [(column: Int, value: UnsafeBufferPointer<UInt8>)], columns: Columns) -> [UInt8] {
        var writer = ByteWriter(capacity: 16 + fields.reduce(0) { $0 + $1.value.count + columns.names[$1.column].count + 2 })
        writer.varint(fields.count)
        for field in fields {
            writer.lengthPrefixed(columns.names[field.column])
            writer.raw(field.value)
        }
        return writer.bytes
    }

    /// The stored row with `fields` (sorted by name) set: both lists walked in name order.
    private static func merge(
        _ row: [UInt8], _ fields: [(column: Int, value: UnsafeBufferPointer<UInt8>)], columns: Columns
    ) throws(WireDecodeError) -> [UInt8] {
        var reader = ByteReader(row)
        let count = try reader.count("field count", minimumElementBytes: 2, limit: ProtocolLimits.maxColumns)
        // The stored fields: name and value ranges in `row`, names strictly increasing.
        var stored: [(name: Range<Int>, value: Range<Int>)] = []
        stored.reserveCapacity(count)
        for _ in 0..<count {
            let name = try reader.skipLengthPrefixed("field name", limit: ProtocolLimits.maxNameBytes)
            if let previous = stored.last, !row[previous.name].lexicographicallyPrecedes(row[name]) {
                throw .malformed(field: "field name", reason: "fields not in name order")
            }
            stored.append((name, try FieldValue.skip(&reader, checkingText: false)))
        }
        try reader.expectEnd()
        let capacity = row.count + fields.reduce(0) { $0 + $1.value.count + columns.names[$1.column].count + 2 }
        var merged = 0
        var body = ByteWriter(capacity: capacity)
        var i = 0, j = 0
        while i < stored.count || j < fields.count {
            let name = j < fields.count ? columns.names[fields[j].column] : nil
            if i < stored.count, name == nil || row[stored[i].name].lexicographicallyPrecedes(name!) {
                body.varint(stored[i].name.count)
                body.raw(row[stored[i].name])
                body.raw(row[stored[i].value])
                i += 1
            } else {
                if i < stored.count, row[stored[i].name].elementsEqual(name!) { i += 1 }  // replaced
                body.lengthPrefixed(name!)
                body.raw(fields[j].value)
                j += 1
            }
            merged += 1
        }
        var writer = ByteWriter(capacity: capacity + 4)
        writer.varint(merged)
        writer.raw(body.bytes)
        return writer.bytes
    }
}
