extension RowChange.Kind {
    var wireValue: UInt8 {
        switch self {
        case .insert: 0
        case .update: 1
        case .delete: 2
        }
    }

    init(wireValue: UInt8) throws(WireDecodeError) {
        switch wireValue {
        case 0: self = .insert
        case 1: self = .update
        case 2: self = .delete
        default: throw .malformed(field: "change kind", reason: "unknown kind \(wireValue)")
        }
    }
}

extension Changeset {
    /// A table dictionary and a column dictionary (names in order of first use), then each
    /// change as kind, table index, key and (unless a delete) column-index/value pairs.
    package func encode(into writer: inout ByteWriter) {
        var tables: [String] = []
        var tableIndex: [String: Int] = [:]
        var columns: [String] = []
        var columnIndex: [String: Int] = [:]
        for change in changes {
            if tableIndex[change.table] == nil {
                tableIndex[change.table] = tables.count
                tables.append(change.table)
            }
            for name in change.fields.keys.sorted() where columnIndex[name] == nil {
                columnIndex[name] = columns.count
                columns.append(name)
            }
        }
        writer.varint(tables.count)
        for table in tables { writer.string(table) }
        writer.varint(columns.count)
        for column in columns { writer.string(column) }
        writer.varint(changes.count)
        for change in changes {
            writer.byte(change.kind.wireValue)
            writer.varint(tableIndex[change.table]!)
            change.key.encode(into: &writer)
            if change.kind != .delete {
                writer.varint(change.fields.count)
                for name in change.fields.keys.sorted() {
                    writer.varint(columnIndex[name]!)
                    change.fields[name]!.encode(into: &writer)
                }
            }
        }
    }

    package static func decode(from reader: inout ByteReader) throws(WireDecodeError) -> Changeset {
        let tables = try names(&reader, "table", limit: ProtocolLimits.maxTables)
        let columns = try names(&reader, "column", limit: ProtocolLimits.maxColumns)
        // Smallest change: kind, table index, key tag, key value.
        let count = try reader.count("change count", minimumElementBytes: 4, limit: Int.max / 4)
        var changes: [RowChange] = []
        for _ in 0..<count {
            let kind = try RowChange.Kind(wireValue: try reader.byte("change kind"))
            let table = try reader.int("table index", in: 0...max(tables.count - 1, 0))
            guard table < tables.count else { throw .malformed(field: "table index", reason: "no table dictionary") }
            let key = try RowKey.decode(from: &reader)
            var fields: [String: FieldValue] = [:]
            if kind != .delete {
                let fieldCount = try reader.count("field count", minimumElementBytes: 2, limit: columns.count)
                for _ in 0..<fieldCount {
                    let column = try reader.int("column index", in: 0...max(columns.count - 1, 0))
                    guard column < columns.count else { throw .malformed(field: "column index", reason: "no column dictionary") }
                    let value = try FieldValue.decode(from: &reader)
                    guard fields.updateValue(value, forKey: columns[column]) == nil else {
                        throw .malformed(field: "column index", reason: "field set twice in one change")
                    }
                }
            }
            changes.append(RowChange(table: tables[table], key: key, kind: kind, fields: fields))
        }
        return Changeset(changes)
    }

    static func names(_ reader: inout ByteReader, _ what: StaticString, limit: Int) throws(WireDecodeError) -> [String] {
        let count = try reader.count(what, limit: limit)
        var names: [String] = []
        var seen: Set<String> = []
        for _ in 0..<count {
            let name = try reader.string(what, limit: ProtocolLimits.maxNameBytes)
            guard seen.insert(name).inserted else { throw .malformed(field: "\(what)", reason: "duplicate name in dictionary") }
            names.append(name)
        }
        return names
    }

    /// The encoded bytes, as stored in server history.
    package var encoded: [UInt8] {
        var writer = ByteWriter()
        encode(into: &writer)
        return writer.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(WireDecodeError) -> Changeset {
        var reader = ByteReader(bytes)
        let changeset = try decode(from: &reader)
        try reader.expectEnd()
        return changeset
    }
}
