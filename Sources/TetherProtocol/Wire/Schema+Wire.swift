extension ColumnType {
    var wireValue: UInt8 {
        switch self {
        case .integer: 0
        case .real: 1
        case .text: 2
        case .blob: 3
        case .boolean: 4
        }
    }

    init(wireValue: UInt8) throws(WireDecodeError) {
        switch wireValue {
        case 0: self = .integer
        case 1: self = .real
        case 2: self = .text
        case 3: self = .blob
        case 4: self = .boolean
        default: throw .malformed(field: "column type", reason: "unknown type \(wireValue)")
        }
    }
}

extension Schema {
    /// Version, then each table: name, primary key, and each column: name, type byte, nullable byte.
    package func encode(into writer: inout ByteWriter) {
        writer.varint(version)
        writer.varint(tables.count)
        for table in tables {
            writer.string(table.name)
            writer.string(table.primaryKey)
            writer.varint(table.columns.count)
            for column in table.columns {
                writer.string(column.name)
                writer.byte(column.type.wireValue)
                writer.bool(column.nullable)
            }
        }
    }

    package static func decode(from reader: inout ByteReader) throws(WireDecodeError) -> Schema {
        let version = try reader.int("schema version", in: 0...Int(Int32.max))
        let tableCount = try reader.count("table count", minimumElementBytes: 3, limit: ProtocolLimits.maxTables)
        var tables: [TableSchema] = []
        for _ in 0..<tableCount {
            let name = try reader.string("table name", limit: ProtocolLimits.maxNameBytes)
            let primaryKey = try reader.string("primary key", limit: ProtocolLimits.maxNameBytes)
            let columnCount = try reader.count("column count", minimumElementBytes: 3, limit: ProtocolLimits.maxColumns)
            var columns: [ColumnSchema] = []
            for _ in 0..<columnCount {
                let column = try reader.string("column name", limit: ProtocolLimits.maxNameBytes)
                let type = try ColumnType(wireValue: try reader.byte("column type"))
                columns.append(ColumnSchema(name: column, type: type, nullable: try reader.bool("nullable")))
            }
            tables.append(TableSchema(name: name, primaryKey: primaryKey, columns: columns))
        }
        return Schema(version: version, tables: tables)
    }

    /// Encoded bytes, as stored in server schema history.
    package var encoded: [UInt8] {
        var writer = ByteWriter()
        encode(into: &writer)
        return writer.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(WireDecodeError) -> Schema {
        var reader = ByteReader(bytes)
        let schema = try decode(from: &reader)
        try reader.expectEnd()
        return schema
    }
}
