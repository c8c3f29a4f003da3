extension FieldValue {
    /// The fields named in `names` (each as its UTF-8 bytes) of a stored row
    /// (``encodedFields(_:)``), the others skipped where they are: what a filter needs of a row,
    /// without a dictionary entry and a `String` for every column (the server evaluates filters
    /// on every row of a partition it reads for a subscription).
    package static func decodeFields(_ bytes: [UInt8], only names: [[UInt8]]) throws(WireDecodeError) -> [String: FieldValue] {
        var reader = ByteReader(bytes)
        let count = try reader.count("field count", minimumElementBytes: 2, limit: ProtocolLimits.maxColumns)
        var fields: [String: FieldValue] = [:]
        fields.reserveCapacity(names.count)
        for _ in 0..<count {
            let name = try reader.skipLengthPrefixed("field name", limit: ProtocolLimits.maxNameBytes)
            guard let wanted = names.first(where: { $0.count == name.count && bytes[name].elementsEqual($0) }) else {
                try skipValue(&reader)
                continue
            }
            fields[String(decoding: wanted, as: UTF8.self)] = try FieldValue.decode(from: &reader)
        }
        try reader.expectEnd()
        return fields
    }

    /// Moves past one value (tag and body) without reading it into a ``FieldValue``.
    static func skipValue(_ reader: inout ByteReader) throws(WireDecodeError) {
        let tag = try reader.byte("value tag")
        switch ValueTag(rawValue: tag) {
        case .null: return
        case .integer: _ = try reader.varint("integer value")
        case .real: _ = try reader.double("real value")
        case .text, .blob: _ = try reader.skipLengthPrefixed("value", limit: ProtocolLimits.maxMessageBytes)
        case nil: throw .malformed(field: "value tag", reason: "unknown tag \(tag)")
        }
    }
}
