/// Builds ``ChangeRows`` change by change, each value written once in its wire form: what an
/// agent's upload batch is read into, straight from the store's rows (positional: a change
/// names its columns by index into the batch's column dictionary, no dictionary or `String` per
/// row). The result is what ``Changeset/encode(into:)`` would write for the same changes, up to
/// the order of the dictionaries and of the fields within a change, which the protocol leaves
/// free.
package struct ChangeRowsBuilder: Sendable {
    private var tables: [String] = []
    private var tableIndex: [String: Int] = [:]
    private var columns: [String] = []
    private var columnIndex: [String: Int] = [:]
    private var body: ByteWriter
    package private(set) var count = 0

    package init(capacity: Int = ProtocolLimits.targetBatchBytes + (64 << 10)) {
        body = ByteWriter(capacity: capacity)
    }

    /// Bytes of changes so far.
    package var byteCount: Int { body.count }

    /// The dictionary index of a table (added on first use).
    package mutating func table(_ name: String) -> Int {
        if let known = tableIndex[name] { return known }
        tables.append(name)
        tableIndex[name] = tables.count - 1
        return tables.count - 1
    }

    /// The dictionary index of a column name (added on first use; tables share names).
    package mutating func column(_ name: String) -> Int {
        if let known = columnIndex[name] { return known }
        columns.append(name)
        columnIndex[name] = columns.count - 1
        return columns.count - 1
    }

    /// Starts a change; an insert or an update is followed by exactly `fieldCount` fields.
    package mutating func change(_ kind: RowChange.Kind, table: Int, key: RowKey, fieldCount: Int) {
        body.byte(kind.wireValue)
        body.varint(table)
        key.encode(into: &body)
        if kind != .delete { body.varint(fieldCount) }
        count += 1
    }

    /// A field whose value is already in its wire form (``ValueWriter``).
    package mutating func field(_ column: Int, encoded value: ArraySlice<UInt8>) {
        body.varint(column)
        body.raw(value)
    }

    package mutating func field(_ column: Int, _ value: FieldValue) {
        body.varint(column)
        value.encode(into: &body)
    }

    /// The changes: the dictionaries, the count, then the changes appended.
    package func build() -> ChangeRows { ChangeRows.assemble(tables: tables, columns: columns, count: count, body: body) }
}

extension ChangeRows {
    /// Changes from their dictionaries and `count` changes already encoded in `body`.
    static func assemble(tables: [String], columns: [String], count: Int, body: ByteWriter) -> ChangeRows {
        var writer = ByteWriter(capacity: body.count + 256)
        writer.varint(tables.count)
        for table in tables { writer.string(table) }
        writer.varint(columns.count)
        for column in columns { writer.string(column) }
        writer.varint(count)
        let rowsStart = writer.count
        writer.raw(body.bytes)
        return ChangeRows(buffer: writer.bytes, range: 0..<writer.count, rowsStart: rowsStart, tables: tables, columns: columns, count: count)
    }
}

/// Writes field values in their wire form (tag, then the value) from what a database hands
/// out — pointers into its row — without making a ``FieldValue`` or a `String` of each.
package struct ValueWriter: Sendable {
    private var writer = ByteWriter(capacity: 64 << 10)

    package init() {}

    package var count: Int { writer.count }
    package subscript(range: Range<Int>) -> ArraySlice<UInt8> { writer.bytes[range] }

    package mutating func null() { writer.byte(ValueTag.null.rawValue) }

    package mutating func integer(_ value: Int64) {
        writer.byte(ValueTag.integer.rawValue)
        writer.signedVarint(value)
    }

    package mutating func real(_ value: Double) {
        writer.byte(ValueTag.real.rawValue)
        writer.double(value)
    }

    /// A text: the bytes as they are when they are UTF-8 (as SQLite hands out what it was
    /// given), otherwise repaired as `String(decoding:as:)` does (what the protocol requires).
    package mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) {
        writer.byte(ValueTag.text.rawValue)
        if UTF8Check.isValid(bytes) {
            writer.varint(bytes.count)
            writer.raw(bytes)
        } else {
            writer.string(String(decoding: bytes, as: UTF8.self))
        }
    }

    package mutating func blob(_ bytes: UnsafeBufferPointer<UInt8>) {
        writer.byte(ValueTag.blob.rawValue)
        writer.varint(bytes.count)
        writer.raw(bytes)
    }
}
