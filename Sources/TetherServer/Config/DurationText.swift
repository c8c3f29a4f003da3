/// A duration as an operator types it (`admin devices --stale`, the console's "not seen for"):
/// `90` or `90s`, `30m`, `24h`, `7d`.
package enum DurationText {
    /// The duration in seconds; nil for anything else (a sign, a fraction, another unit).
    package static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let last = text.last else { return nil }
        let (digits, unit) = units[last].map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits), value >= 0, value <= Int(Int32.max) else { return nil }
        return value * unit
    }
}
