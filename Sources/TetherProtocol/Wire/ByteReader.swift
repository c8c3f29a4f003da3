/// Reads the wire primitives of docs/protocol.md from a byte buffer with strict bounds
/// checks: every read that would run past the end, overflow, or exceed a limit throws a
/// ``WireDecodeError``; nothing traps and no allocation is sized by an unchecked length.
package struct ByteReader: Sendable {
    private let bytes: [UInt8]
    package private(set) var offset: Int

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    package var remaining: Int { bytes.count - offset }
    package var isAtEnd: Bool { offset == bytes.count }

    package mutating func byte(_ field: StaticString) throws(WireDecodeError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(field: "\(field)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func varint(_ field: StaticString) throws(WireDecodeError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte(field)
            if shift == 63 && b > 1 { throw .malformed(field: "\(field)", reason: "varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 { throw .malformed(field: "\(field)", reason: "varint is not minimally encoded") }
                return result
            }
            shift += 7
            if shift > 63 { throw .malformed(field: "\(field)", reason: "varint longer than 10 bytes") }
        }
    }

    /// An unsigned varint that must fit a non-negative Int64.
    package mutating func int64(_ field: StaticString) throws(WireDecodeError) -> Int64 {
        let value = try varint(field)
        guard value <= UInt64(Int64.max) else { throw .malformed(field: "\(field)", reason: "value exceeds Int64.max") }
        return Int64(value)
    }

    /// An unsigned varint within `range`.
    package mutating func int(_ field: StaticString, in range: ClosedRange<Int>) throws(WireDecodeError) -> Int {
        let value = try varint(field)
        guard value <= UInt64(Int.max), range.contains(Int(value)) else {
            throw .malformed(field: "\(field)", reason: "\(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return Int(value)
    }

    package mutating func uint32(_ field: StaticString) throws(WireDecodeError) -> UInt32 {
        let value = try varint(field)
        guard value <= UInt64(UInt32.max) else { throw .malformed(field: "\(field)", reason: "value exceeds UInt32.max") }
        return UInt32(value)
    }

    package mutating func signedVarint(_ field: StaticString) throws(WireDecodeError) -> Int64 {
        let raw = try varint(field)
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    package mutating func double(_ field: StaticString) throws(WireDecodeError) -> Double {
        guard remaining >= 8 else { throw .truncated(field: "\(field)") }
        var bits: UInt64 = 0
        for i in 0..<8 { bits |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return Double(bitPattern: bits)
    }

    package mutating func bool(_ field: StaticString) throws(WireDecodeError) -> Bool {
        switch try byte(field) {
        case 0: return false
        case 1: return true
        case let other: throw .malformed(field: "\(field)", reason: "boolean byte \(other)")
        }
    }

    /// A count of elements that each take at least `minimumElementBytes`: bounded by what is
    /// left in the message (so a forged count cannot make the decoder allocate) and by `limit`.
    package mutating func count(_ field: StaticString, minimumElementBytes: Int = 1, limit: Int) throws(WireDecodeError) -> Int {
        let value = try varint(field)
        guard value <= UInt64(limit) else { throw .limitExceeded(field: "\(field)", limit: limit) }
        guard Int(value) * minimumElementBytes <= remaining else { throw .truncated(field: "\(field)") }
        return Int(value)
    }

    /// Length-prefixed bytes, at most `limit` long.
    package mutating func lengthPrefixed(_ field: StaticString, limit: Int) throws(WireDecodeError) -> [UInt8] {
        let length = try varint(field)
        guard length <= UInt64(limit) else { throw .limitExceeded(field: "\(field)", limit: limit) }
        guard Int(length) <= remaining else { throw .truncated(field: "\(field)") }
        defer { offset += Int(length) }
        return Array(bytes[offset..<offset + Int(length)])
    }

    /// `count` bytes as they are (a digest).
    package mutating func raw(_ field: StaticString, count: Int) throws(WireDecodeError) -> [UInt8] {
        guard count <= remaining else { throw .truncated(field: "\(field)") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A length-prefixed UTF-8 string, at most `limit` bytes; invalid UTF-8 is an error.
    package mutating func string(_ field: StaticString, limit: Int) throws(WireDecodeError) -> String {
        let length = try varint(field)
        guard length <= UInt64(limit) else { throw .limitExceeded(field: "\(field)", limit: limit) }
        guard Int(length) <= remaining else { throw .truncated(field: "\(field)") }
        let slice = bytes[offset..<offset + Int(length)]
        offset += Int(length)
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw .malformed(field: "\(field)", reason: "invalid UTF-8")
        }
        return string
    }

    /// The whole buffer being read (shared, not copied): what ``StateRows`` keeps instead of
    /// copying its part out.
    var buffer: [UInt8] { bytes }

    /// Skips length-prefixed bytes, at most `limit` long; returns where they are in ``buffer``.
    mutating func skipLengthPrefixed(_ field: StaticString, limit: Int) throws(WireDecodeError) -> Range<Int> {
        let length = try varint(field)
        guard length <= UInt64(limit) else { throw .limitExceeded(field: "\(field)", limit: limit) }
        guard Int(length) <= remaining else { throw .truncated(field: "\(field)") }
        defer { offset += Int(length) }
        return offset..<offset + Int(length)
    }

    /// Skips a length-prefixed UTF-8 string, checking that it is valid UTF-8 without making a
    /// `String` of it; returns where its bytes are in ``buffer``.
    mutating func skipString(_ field: StaticString, limit: Int) throws(WireDecodeError) -> Range<Int> {
        let range = try skipLengthPrefixed(field, limit: limit)
        guard UTF8Check.isValid(bytes[range]) else { throw .malformed(field: "\(field)", reason: "invalid UTF-8") }
        return range
    }

    /// Skips `count` bytes.
    mutating func skip(_ field: StaticString, count: Int) throws(WireDecodeError) {
        guard count <= remaining else { throw .truncated(field: "\(field)") }
        offset += count
    }

    /// Fails unless every byte was consumed.
    package func expectEnd() throws(WireDecodeError) {
        guard isAtEnd else { throw .trailingBytes(count: remaining) }
    }
}
