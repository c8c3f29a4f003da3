/// A device's values for the parameters a filter may name.
package struct FilterParameters: Sendable, Hashable {
    package var name: String
    package var id: String?
    package var tags: [String: String]

    package init(name: String, id: String? = nil, tags: [String: String] = [:]) {
        self.name = name
        self.id = id
        self.tags = tags
    }
}

/// A filter with the device's parameters and the time put in: literals only. Evaluates a row
/// (``matches(_:)``) with SQL's three-valued logic and renders SQL with placeholders
/// (``sql(placeholder:quote:)``) that selects exactly the rows ``matches(_:)`` takes.
package struct ResolvedFilter: Sendable, Hashable {
    /// The tree with values for operands.
    package typealias Node = FilterTree<FieldValue>

    package let table: String
    package let root: Node
}

extension SubscriptionFilter {
    /// Puts in the device's parameters and the time (`now`: seconds since 1970, UTC); throws when
    /// the device lacks a parameter or its value does not fit the column (an integer column's
    /// parameter must read as an integer).
    package func resolved(with parameters: FilterParameters, now: Double, schema: TableSchema) throws(SubscriptionFilterError) -> ResolvedFilter {
        let root = try expression.map { (column, operand) throws(SubscriptionFilterError) -> FieldValue in
            try Self.value(of: operand, for: schema.column(column)?.type ?? .text, column: column, parameters, now: now)
        }
        return ResolvedFilter(table: table, root: root)
    }

    private static func value(
        of operand: FilterOperand, for type: ColumnType, column: String, _ parameters: FilterParameters, now: Double
    ) throws(SubscriptionFilterError) -> FieldValue {
        switch operand {
        case .literal(let value):
            return value
        case .now(let offset):
            let seconds = now + Double(offset)
            switch type {
            case .text: return .text(iso8601(seconds))
            case .real: return .real(seconds)
            default: return .integer(Int64(seconds.rounded(.down)))
            }
        case .parameter(let parameter):
            let text: String? =
                switch parameter {
                case .name: parameters.name
                case .id: parameters.id
                case .tag(let key): parameters.tags[key]
                }
            guard let text else { throw SubscriptionFilterError(.parameter("the device has no \(parameter)"), at: nil) }
            guard type == .integer else { return .text(text) }
            guard let integer = Int64(text) else {
                throw SubscriptionFilterError(.parameter("the device's \(parameter) is not an integer, as column \(column) needs"), at: nil)
            }
            return .integer(integer)
        }
    }

    /// `2026-11-30T12:00:00.000Z`: ISO 8601 in UTC with milliseconds, which sorts as text in
    /// time order against values written the same way.
    package static func iso8601(_ seconds: Double) -> String {
        let milliseconds = Int64((seconds * 1000).rounded(.down))
        let (day, rest) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (dayFloor, msOfDay) = rest < 0 ? (day - 1, rest + 86_400_000) : (day, rest)
        let (year, month, dayOfMonth) = civil(fromDays: dayFloor)
        let hours = msOfDay / 3_600_000, minutes = msOfDay / 60_000 % 60, secs = msOfDay / 1000 % 60, ms = msOfDay % 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(dayOfMonth, 2))T\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(secs, 2)).\(pad(ms, 3))Z"
    }

    /// Howard Hinnant's days-from-civil inverse: the proleptic Gregorian date of a day count
    /// since 1970-01-01.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
