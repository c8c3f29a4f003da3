/// Changes as they travel: the changeset encoding of docs/protocol.md, checked once where the
/// message is decoded (the changeset decoder's limits and rules; for a state chunk also: inserts
/// only) and then read in place — a bootstrap, a reset or a download writes its rows without
/// making a dictionary, a `String` or a ``FieldValue`` per row (``Cursor``), and the server
/// builds state chunks from its stored rows without decoding their values
/// (``StateRowsBuilder``).
package struct ChangeRows: Sendable, Hashable {
    /// The buffer the rows are in (for a received message, the whole message, shared) and
    /// where in it they are.
    let buffer: [UInt8]
    let range: Range<Int>
    /// Where the first row starts in ``buffer``.
    let rowsStart: Int
    /// The table and column dictionaries: a row names its table, a field its column, by index.
    package let tables: [String]
    package let columns: [String]
    /// How many rows (changes).
    package let count: Int

    init(buffer: [UInt8], range: Range<Int>, rowsStart: Int, tables: [String], columns: [String], count: Int) {
        self.buffer = buffer
        self.range = range
        self.rowsStart = rowsStart
        self.tables = tables
        self.columns = columns
        self.count = count
    }

    /// The changes of a changeset (tests, and what a caller holding changes sends).
    package init(_ changeset: Changeset) {
        let bytes = changeset.encoded
        // Valid by construction: the encoder writes what the decoder accepts.
        self = try! Self.decode(bytes)
    }

    package var isEmpty: Bool { count == 0 }
    /// Size of the encoded rows (what progress counts as bytes).
    package var byteCount: Int { range.count }

    /// The rows as a ``Changeset`` (tests, small tools, and a download's changes to rows with
    /// pending local changes; the data path reads them with a ``Cursor``).
    package var changeset: Changeset {
        // Checked when decoded, by rules stricter than the changeset decoder's.
        try! Changeset.decode(Array(buffer[range]))
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.buffer[lhs.range] == rhs.buffer[rhs.range] }
    package func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(range.count)
    }

    package func encode(into writer: inout ByteWriter) { writer.raw(buffer[range]) }

    /// The changes' encoding, as received or built (what a server stores in its history).
    package var encoded: [UInt8] { Array(buffer[range]) }

    package static func decode(_ bytes: [UInt8], insertsOnly: Bool = false) throws(WireDecodeError) -> ChangeRows {
        var reader = ByteReader(bytes)
        let rows = try decode(from: &reader, allowing: insertsOnly ? .insertsOnly : .any)
        try reader.expectEnd()
        return rows
    }

    /// The kinds of change a message's rows may hold, and how a refusal is worded.
    struct AllowedKinds: Sendable {
        let kinds: Set<RowChange.Kind>
        let refusal: String

        static let any = AllowedKinds(kinds: [.insert, .update, .delete], refusal: "")
        /// A state chunk's rows: whole rows.
        static let insertsOnly = AllowedKinds(kinds: [.insert], refusal: "a state row is an insert")
        /// A heal chunk's unknown keys: they name rows, nothing more.
        static let deletesOnly = AllowedKinds(kinds: [.delete], refusal: "an unknown key is a delete")
        /// A heal chunk's rows: a view holds a whole row or none.
        static let insertsAndDeletes = AllowedKinds(kinds: [.insert, .delete], refusal: "a heal row is an insert or a delete")
        /// A subscription chunk's rows: whole rows entering, keys leaving.
        static let entering = AllowedKinds(kinds: [.insert, .delete], refusal: "a subscription row is an insert or a removal")
    }

    /// Checks the rows where they are in the reader's buffer and keeps them there; a kind of
    /// change `allowed` does not hold (an update in a state chunk's rows) is refused.
    static func decode(from reader: inout ByteReader, allowing allowed: AllowedKinds) throws(WireDecodeError) -> ChangeRows {
        let start = reader.offset
        let tables = try Changeset.names(&reader, "table", limit: ProtocolLimits.maxTables)
        let columns = try Changeset.names(&reader, "column", limit: ProtocolLimits.maxColumns)
        // Smallest row: kind, table index, key tag, key value.
        let count = try reader.count("change count", minimumElementBytes: 4, limit: Int.max / 4)
        let rowsStart = reader.offset
        // The row in which each column was last set: a field set twice in one row is refused.
        var lastSetIn = [Int](repeating: -1, count: columns.count)
        for row in 0..<count {
            let kind = try RowChange.Kind(wireValue: try reader.byte("change kind"))
            guard allowed.kinds.contains(kind) else { throw .malformed(field: "change kind", reason: allowed.refusal) }
            let table = try reader.int("table index", in: 0...max(tables.count - 1, 0))
            guard table < tables.count else { throw .malformed(field: "table index", reason: "no table dictionary") }
            try RowKey.skip(&reader)
            guard kind != .delete else { continue }
            let fieldCount = try reader.count("field count", minimumElementBytes: 2, limit: columns.count)
            for _ in 0..<fieldCount {
                let column = try reader.int("column index", in: 0...max(columns.count - 1, 0))
                guard column < columns.count else { throw .malformed(field: "column index", reason: "no column dictionary") }
                guard lastSetIn[column] != row else { throw .malformed(field: "column index", reason: "field set twice in one change") }
                lastSetIn[column] = row
                _ = try FieldValue.skip(&reader, checkingText: true)
            }
        }
        return ChangeRows(
            buffer: reader.buffer, range: start..<reader.offset, rowsStart: rowsStart, tables: tables, columns: columns, count: count)
    }
}

extension RowKey {
    /// Skips an encoded key (an integer or a text), checking it as ``decode(from:)`` does.
    static func skip(_ reader: inout ByteReader) throws(WireDecodeError) {
        let tag = try reader.byte("key tag")
        switch ValueTag(rawValue: tag) {
        case .integer: _ = try reader.varint("integer key")
        case .text: _ = try reader.skipString("text key", limit: ProtocolLimits.maxMessageBytes)
        default: throw .malformed(field: "key tag", reason: "tag \(tag) is not an integer or text key")
        }
    }
}

extension FieldValue {
    /// Skips an encoded value, checking it as ``decode(from:)`` does (texts for UTF-8 only
    /// with `checkingText`); returns where the value, tag included, is in the reader's buffer.
    static func skip(_ reader: inout ByteReader, checkingText: Bool) throws(WireDecodeError) -> Range<Int> {
        let start = reader.offset
        let tag = try reader.byte("value tag")
        switch ValueTag(rawValue: tag) {
        case .null: break
        case .integer: _ = try reader.varint("integer value")
        case .real: try reader.skip("real value", count: 8)
        case .text:
            if checkingText {
                _ = try reader.skipString("text value", limit: ProtocolLimits.maxMessageBytes)
            } else {
                _ = try reader.skipLengthPrefixed("text value", limit: ProtocolLimits.maxMessageBytes)
            }
        case .blob: _ = try reader.skipLengthPrefixed("blob value", limit: ProtocolLimits.maxMessageBytes)
        case nil: throw .malformed(field: "value tag", reason: "unknown tag \(tag)")
        }
        return start..<reader.offset
    }
}

/// The rows of a state chunk: ``ChangeRows`` whose every change is a whole-row insert (decoded
/// with `insertsOnly`).
package typealias StateRows = ChangeRows
