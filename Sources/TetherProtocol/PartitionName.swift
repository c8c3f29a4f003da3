/// The validated name of a partition (docs/contract.md: Partitions and stores): `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`.
package struct PartitionName: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    package let rawValue: String

    /// Returns nil when `rawValue` is not a legal partition name.
    package init?(_ rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    package static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...128).contains(bytes.count) else { return false }
        func alnum(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
        }
        guard alnum(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { alnum($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
    }

    package var description: String { rawValue }
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard Self.isValid(raw) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "illegal partition name \(raw.debugDescription)")
        }
        self.rawValue = raw
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
