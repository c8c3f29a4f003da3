/// Builds ``StateRows`` from a server's stored state rows — each a table name, its key as
/// ``RowKey/encoded`` and its fields as ``FieldValue/encodedFields(_:)`` — copying keys and
/// values byte for byte instead of decoding them and encoding them again. As the server always
/// did, a nullable column of the schema the stored row lacks (added since) is sent as null.
package struct StateRowsBuilder: Sendable {
    private let schema: Schema
    private var tables: [String] = []
    private var tableIndex: [String: Int] = [:]
    /// Per table index: the column indices of its nullable value columns.
    private var nullableColumns: [[Int]] = []
    private var columns: [String] = []
    private var columnIndex: [String: Int] = [:]
    /// Per field position: the name last seen there and its column index (stored rows of a
    /// table list the same names in the same order, so this spares hashing the name).
    private var namesAtPosition: [(name: [UInt8], column: Int)] = []
    /// The row in which each column was last set.
    private var lastSetIn: [Int] = []
    private var fields: [(column: Int, value: Range<Int>)] = []
    private var body: ByteWriter
    package private(set) var count = 0

    package init(schema: Schema, capacity: Int = ProtocolLimits.targetBatchBytes + (64 << 10)) {
        self.schema = schema
        body = ByteWriter(capacity: capacity)
    }

    /// Bytes of rows so far.
    package var byteCount: Int { body.count }

    /// Appends one stored row. Throws when the stored key or fields are not what the server writes.
    package mutating func append(table: String, key: [UInt8], fields encodedFields: [UInt8]) throws(WireDecodeError) {
        let table = index(ofTable: table)
        var keyReader = ByteReader(key)
        try RowKey.skip(&keyReader)
        try keyReader.expectEnd()

        var reader = ByteReader(encodedFields)
        let fieldCount = try reader.count("field count", minimumElementBytes: 2, limit: ProtocolLimits.maxColumns)
        fields.removeAll(keepingCapacity: true)
        for position in 0..<fieldCount {
            let name = try reader.skipLengthPrefixed("field name", limit: ProtocolLimits.maxNameBytes)
            let column = try index(ofColumnNamed: encodedFields[name], at: position)
            guard lastSetIn[column] != count else { throw .malformed(field: "field name", reason: "duplicate field") }
            lastSetIn[column] = count
            fields.append((column, try FieldValue.skip(&reader, checkingText: false)))
        }
        try reader.expectEnd()
        let nulls = nullableColumns[table].filter { lastSetIn[$0] != count }

        body.byte(RowChange.Kind.insert.wireValue)
        body.varint(table)
        body.raw(key)
        body.varint(fields.count + nulls.count)
        for field in fields {
            body.varint(field.column)
            body.raw(encodedFields[field.value])
        }
        for column in nulls {
            body.varint(column)
            body.byte(ValueTag.null.rawValue)
        }
        count += 1
    }

    /// The rows: the dictionaries, the count, then the rows appended.
    package func build() -> StateRows { ChangeRows.assemble(tables: tables, columns: columns, count: count, body: body) }

    private mutating func index(ofTable name: String) -> Int {
        if let known = tableIndex[name] { return known }
        let new = tables.count
        tables.append(name)
        tableIndex[name] = new
        var nullable: [Int] = []
        for column in schema.table(name)?.valueColumns ?? [] where column.nullable { nullable.append(index(ofColumn: column.name)) }
        nullableColumns.append(nullable)
        return new
    }

    private mutating func index(ofColumn name: String) -> Int {
        if let known = columnIndex[name] { return known }
        let new = columns.count
        columns.append(name)
        columnIndex[name] = new
        lastSetIn.append(-1)
        return new
    }

    private mutating func index(ofColumnNamed name: ArraySlice<UInt8>, at position: Int) throws(WireDecodeError) -> Int {
        if position < namesAtPosition.count, namesAtPosition[position].name.elementsEqual(name) {
            return namesAtPosition[position].column
        }
        guard let string = String(validating: name, as: UTF8.self) else {
            throw .malformed(field: "field name", reason: "invalid UTF-8")
        }
        let column = index(ofColumn: string)
        let entry = (name: Array(name), column: column)
        if position < namesAtPosition.count { namesAtPosition[position] = entry } else { namesAtPosition.append(entry) }
        return column
    }
}
