/// A column value as the server's filter index keeps it: bytes whose order (memcmp, the order of
/// SQLite's BLOB and PostgreSQL's `bytea`) is the filter evaluation's (``ResolvedFilter``):
/// numbers first, by value (an integer and a real of the same value are the same bytes), then
/// text by its UTF-8 bytes, then blobs. NULL has no index entry: no comparison matches it.
///
/// An integer beyond 2^53 is kept as the nearest double, so two close integers may share their
/// bytes: the order is never inverted, only ties appear, which is why an ``IndexPlan`` bounds
/// every range inclusively and the rows it finds are evaluated by the filter itself.
package enum IndexedValue {
    /// The value's index bytes; nil for NULL.
    package static func encode(_ value: FieldValue) -> [UInt8]? {
        switch value {
        case .null: return nil
        case .integer(let integer): return number(Double(integer))
        case .real(let real): return number(real)
        case .text(let text): return [2] + Array(text.utf8)
        case .blob(let bytes): return [3] + bytes
        }
    }

    /// The least bytes any text value has: every number sorts below.
    package static let textStart: [UInt8] = [2]

    private static func number(_ value: Double) -> [UInt8] {
        // -0 is 0 and every NaN the one canonical NaN (above +inf, as evaluation orders it).
        let normalised = value.isNaN ? Double.nan : (value == 0 ? 0 : value)
        let bits = normalised.bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        var bytes: [UInt8] = [1]
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: ordered >> UInt64(shift))) }
        return bytes
    }
}
