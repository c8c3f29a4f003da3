extension Changeset {
    /// Checks encoded changeset bytes by the rules of ``decode(_:)`` — dictionaries, indices,
    /// keys, values (texts as UTF-8), kinds, no field set twice, nothing left over — without
    /// building the changes: for bytes a server passes on as it stored them.
    public static func check(_ bytes: [UInt8]) throws(WireDecodeError) {
        var reader = ByteReader(bytes)
        // The dictionaries are read as the decoder reads them (once per changeset, not per row).
        let tables = try names(&reader, "table", limit: ProtocolLimits.maxTables).count
        let columns = try names(&reader, "column", limit: ProtocolLimits.maxColumns).count
        let count = try reader.count("change count", minimumElementBytes: 4, limit: Int.max / 4)
        var lastSetIn = [Int](repeating: -1, count: columns)
        for change in 0..<count {
            let kind = try RowChange.Kind(wireValue: try reader.byte("change kind"))
            let table = try reader.int("table index", in: 0...max(tables - 1, 0))
            guard table < tables else { throw .malformed(field: "table index", reason: "no table dictionary") }
            try RowKey.skip(&reader)
            guard kind != .delete else { continue }
            let fieldCount = try reader.count("field count", minimumElementBytes: 2, limit: columns)
            for _ in 0..<fieldCount {
                let column = try reader.int("column index", in: 0...max(columns - 1, 0))
                guard column < columns else { throw .malformed(field: "column index", reason: "no column dictionary") }
                guard lastSetIn[column] != change else { throw .malformed(field: "column index", reason: "field set twice in one change") }
                lastSetIn[column] = change
                _ = try FieldValue.skip(&reader, checkingText: true)
            }
        }
        try reader.expectEnd()
    }
}
