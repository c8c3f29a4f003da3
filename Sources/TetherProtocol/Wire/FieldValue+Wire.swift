/// Value tags shared by field values and row keys on the wire.
enum ValueTag: UInt8 {
    case null = 0
    case integer = 1
    case real = 2
    case text = 3
    case blob = 4
}

extension FieldValue {
    /// Tag byte, then the value: zig-zag varint, 8-byte little-endian double, or length-prefixed bytes.
    package func encode(into writer: inout ByteWriter) {
        switch self {
        case .null:
            writer.byte(ValueTag.null.rawValue)
        case .integer(let v):
            writer.byte(ValueTag.integer.rawValue)
            writer.signedVarint(v)
        case .real(let v):
            writer.byte(ValueTag.real.rawValue)
            writer.double(v)
        case .text(let v):
            writer.byte(ValueTag.text.rawValue)
            writer.string(v)
        case .blob(let v):
            writer.byte(ValueTag.blob.rawValue)
            writer.lengthPrefixed(v)
        }
    }

    package static func decode(from reader: inout ByteReader) throws(WireDecodeError) -> FieldValue {
        let tag = try reader.byte("value tag")
        switch ValueTag(rawValue: tag) {
        case .null: return .null
        case .integer: return .integer(try reader.signedVarint("integer value"))
        case .real: return .real(try reader.double("real value"))
        case .text: return .text(try reader.string("text value", limit: ProtocolLimits.maxMessageBytes))
        case .blob: return .blob(try reader.lengthPrefixed("blob value", limit: ProtocolLimits.maxMessageBytes))
        case nil: throw .malformed(field: "value tag", reason: "unknown tag \(tag)")
        }
    }

    /// Fields sorted by name (deterministic bytes): count, then name and value of each.
    package static func encode(fields: [String: FieldValue], into writer: inout ByteWriter) {
        writer.varint(fields.count)
        for name in fields.keys.sorted() {
            writer.string(name)
            fields[name]!.encode(into: &writer)
        }
    }

    package static func decodeFields(from reader: inout ByteReader) throws(WireDecodeError) -> [String: FieldValue] {
        let count = try reader.count("field count", minimumElementBytes: 2, limit: ProtocolLimits.maxColumns)
        var fields: [String: FieldValue] = [:]
        for _ in 0..<count {
            let name = try reader.string("field name", limit: ProtocolLimits.maxNameBytes)
            let value = try FieldValue.decode(from: &reader)
            guard fields.updateValue(value, forKey: name) == nil else {
                throw .malformed(field: "field name", reason: "duplicate field")
            }
        }
        return fields
    }

    /// Encoded form of a fields dictionary, as stored by server storage.
    package static func encodedFields(_ fields: [String: FieldValue]) -> [UInt8] {
        var writer = ByteWriter()
        encode(fields: fields, into: &writer)
        return writer.bytes
    }

    package static func decodeFields(_ bytes: [UInt8]) throws(WireDecodeError) -> [String: FieldValue] {
        var reader = ByteReader(bytes)
        let fields = try decodeFields(from: &reader)
        try reader.expectEnd()
        return fields
    }
}

extension RowKey {
    package func encode(into writer: inout ByteWriter) {
        switch self {
        case .integer(let v):
            writer.byte(ValueTag.integer.rawValue)
            writer.signedVarint(v)
        case .text(let v):
            writer.byte(ValueTag.text.rawValue)
            writer.string(v)
        }
    }

    package static func decode(from reader: inout ByteReader) throws(WireDecodeError) -> RowKey {
        let tag = try reader.byte("key tag")
        switch ValueTag(rawValue: tag) {
        case .integer: return .integer(try reader.signedVarint("integer key"))
        case .text: return .text(try reader.string("text key", limit: ProtocolLimits.maxMessageBytes))
        default: throw .malformed(field: "key tag", reason: "tag \(tag) is not an integer or text key")
        }
    }

    /// Encoded form of a key, as stored by server storage (sorts integers before text).
    package var encoded: [UInt8] {
        var writer = ByteWriter()
        encode(into: &writer)
        return writer.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(WireDecodeError) -> RowKey {
        var reader = ByteReader(bytes)
        let key = try decode(from: &reader)
        try reader.expectEnd()
        return key
    }
}
