extension ChangeRows {
    /// A value read in place: texts and blobs point into the rows' buffer and are valid only
    /// inside ``withCursor(_:)``.
    package enum Value {
        case null
        case integer(Int64)
        case real(Double)
        case text(UnsafeBufferPointer<UInt8>)
        case blob(UnsafeBufferPointer<UInt8>)
    }

    /// Reads the rows in order without copying them: ``nextChange()`` (or ``nextRow()`` for
    /// state rows), then ``nextField()`` as many times as the change's ``fieldsLeft``. The rows
    /// were checked when decoded, so reading cannot fail.
    package struct Cursor {
        private let base: UnsafeBufferPointer<UInt8>
        private var offset: Int
        private var rowsLeft: Int
        /// Fields of the current row not read yet.
        package private(set) var fieldsLeft = 0
        /// The current change's key as encoded (tag and value: ``RowKey/encoded``).
        package private(set) var encodedKey = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

        init(base: UnsafeBufferPointer<UInt8>, offset: Int, rows: Int) {
            self.base = base
            self.offset = offset
            self.rowsLeft = rows
        }

        /// The next change's kind, table (an index into ``ChangeRows/tables``) and key (an
        /// integer or a text); nil after the last. Skips any field of the previous change not read.
        package mutating func nextChange() -> (kind: RowChange.Kind, table: Int, key: Value)? {
            while fieldsLeft > 0 { _ = nextField() }
            guard rowsLeft > 0 else { return nil }
            rowsLeft -= 1
            let kind: RowChange.Kind = switch base[offset] {
            case 0: .insert
            case 1: .update
            default: .delete
            }
            offset += 1
            let table = Int(varint())
            let keyStart = offset
            let key = value()
            encodedKey = UnsafeBufferPointer(rebasing: base[keyStart..<offset])
            fieldsLeft = kind == .delete ? 0 : Int(varint())
            return (kind, table, key)
        }

        /// The current change's next field: a column and its value as encoded (tag and value:
        /// what ``FieldValue/encode(into:)`` writes), to copy without reading it.
        package mutating func nextEncodedField() -> (column: Int, value: UnsafeBufferPointer<UInt8>) {
            precondition(fieldsLeft > 0, "no field left in this row")
            fieldsLeft -= 1
            let column = Int(varint())
            let start = offset
            _ = value()
            return (column, UnsafeBufferPointer(rebasing: base[start..<offset]))
        }

        /// The next state row's table and key (``nextChange()`` of rows that are all inserts).
        package mutating func nextRow() -> (table: Int, key: Value)? {
            nextChange().map { ($0.table, $0.key) }
        }

        /// The current change's next field: a column (an index into ``ChangeRows/columns``) and its value.
        package mutating func nextField() -> (column: Int, value: Value) {
            precondition(fieldsLeft > 0, "no field left in this row")
            fieldsLeft -= 1
            let column = Int(varint())
            return (column, value())
        }

        private mutating func value() -> Value {
            let tag = base[offset]
            offset += 1
            switch ValueTag(rawValue: tag) {
            case .integer:
                let raw = varint()
                return .integer(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
            case .real:
                var bits: UInt64 = 0
                for i in 0..<8 { bits |= UInt64(base[offset + i]) << (8 * UInt64(i)) }
                offset += 8
                return .real(Double(bitPattern: bits))
            case .text: return .text(bytes())
            case .blob: return .blob(bytes())
            case .null, nil: return .null
            }
        }

        private mutating func bytes() -> UnsafeBufferPointer<UInt8> {
            let length = Int(varint())
            defer { offset += length }
            return UnsafeBufferPointer(rebasing: base[offset..<offset + length])
        }

        private mutating func varint() -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = base[offset]
                offset += 1
                result |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return result }
                shift += 7
            }
        }
    }

    /// Calls `body` with a cursor at the first row.
    package func withCursor<R, E: Error>(_ body: (inout Cursor) throws(E) -> R) throws(E) -> R {
        try buffer.withUnsafeBufferPointer { (base) throws(E) -> R in
            var cursor = Cursor(base: base, offset: rowsStart, rows: count)
            return try body(&cursor)
        }
    }
}

extension ChangeRows.Value {
    /// The value as a ``FieldValue`` (tests, and checks that need one; the data path binds in place).
    package var fieldValue: FieldValue {
        switch self {
        case .null: .null
        case .integer(let v): .integer(v)
        case .real(let v): .real(v)
        case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
        case .blob(let bytes): .blob(Array(bytes))
        }
    }

    /// The value's type name, for error messages (never the value itself).
    package var typeName: String { fieldValue.typeName }
}
