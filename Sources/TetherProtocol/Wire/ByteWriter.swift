/// Appends the wire primitives of docs/protocol.md to a byte array: LEB128 varints,
/// zig-zag signed varints, little-endian doubles and length-prefixed strings and bytes.
package struct ByteWriter: Sendable {
    package private(set) var bytes: [UInt8]

    package init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package var count: Int { bytes.count }

    package mutating func byte(_ value: UInt8) { bytes.append(value) }

    package mutating func raw(_ value: some Sequence<UInt8>) { bytes.append(contentsOf: value) }

    /// Unsigned LEB128: 7 bits per byte, least significant group first, high bit = more.
    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A non-negative Int64 (versions, salts, ids, sequence numbers) as an unsigned varint.
    package mutating func varint(_ value: Int64) {
        precondition(value >= 0, "negative value written as unsigned varint")
        varint(UInt64(value))
    }

    package mutating func varint(_ value: Int) { varint(Int64(value)) }

    package mutating func varint(_ value: UInt32) { varint(UInt64(value)) }

    /// Any Int64, zig-zag encoded so small negative numbers stay short.
    package mutating func signedVarint(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    package mutating func double(_ value: Double) {
        var bits = value.bitPattern
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }

    /// Varint length, then the UTF-8 bytes.
    package mutating func string(_ value: String) {
        let utf8 = value.utf8
        varint(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    /// Varint length, then the bytes.
    package mutating func lengthPrefixed(_ value: [UInt8]) {
        varint(value.count)
        bytes.append(contentsOf: value)
    }

    package mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
}
