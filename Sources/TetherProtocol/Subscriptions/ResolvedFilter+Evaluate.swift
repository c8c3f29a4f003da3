/// A row against a resolved filter, as SQLite's `WHERE` would take it: comparisons with NULL
/// are unknown, `NOT` of unknown is unknown, and only true matches. Numbers compare by value
/// (an integer with a real), text by its UTF-8 bytes (SQLite's BINARY collation); a number and
/// text never equal (the checker keeps them apart).
extension ResolvedFilter {
    /// SQL's three truth values.
    enum Truth: Sendable, Hashable {
        case yes, no, unknown

        static prefix func ! (value: Truth) -> Truth {
            switch value {
            case .yes: .no
            case .no: .yes
            case .unknown: .unknown
            }
        }

        init(_ value: Bool) { self = value ? .yes : .no }
    }

    /// Whether the row (its columns by name) is in the subscription.
    package func matches(_ row: [String: FieldValue]) -> Bool {
        Self.evaluate(root, row) == .yes
    }

    static func evaluate(_ node: Node, _ row: [String: FieldValue]) -> Truth {
        switch node {
        case .compare(let column, let comparison, let operand):
            guard let order = order(row[column] ?? .null, operand) else { return .unknown }
            let holds: Bool =
                switch comparison {
                case .equal: order == 0
                case .notEqual: order != 0
                case .less: order < 0
                case .lessOrEqual: order <= 0
                case .greater: order > 0
                case .greaterOrEqual: order >= 0
                }
            return Truth(holds)
        case .isIn(let column, let values, let negated):
            let value = row[column] ?? .null
            if value.isNull { return .unknown }
            let found = values.contains { order(value, $0) == 0 }
            return Truth(found != negated)
        case .between(let column, let low, let high, let negated):
            let value = row[column] ?? .null
            let inside = and([compareTruth(value, low, { $0 >= 0 }), compareTruth(value, high, { $0 <= 0 })])
            return negated ? !inside : inside
        case .isNull(let column, let negated):
            return Truth((row[column] ?? .null).isNull != negated)
        case .isTrue(let column):
            guard let order = order(row[column] ?? .null, .integer(0)) else { return .unknown }
            return Truth(order != 0)
        case .and(let all):
            return and(all.map { evaluate($0, row) })
        case .or(let all):
            let values = all.map { evaluate($0, row) }
            if values.contains(.yes) { return .yes }
            return values.contains(.unknown) ? .unknown : .no
        case .not(let inner):
            return !evaluate(inner, row)
        }
    }

    private static func and(_ values: [Truth]) -> Truth {
        if values.contains(.no) { return .no }
        return values.contains(.unknown) ? .unknown : .yes
    }

    private static func compareTruth(_ value: FieldValue, _ operand: FieldValue, _ test: (Int) -> Bool) -> Truth {
        guard let order = order(value, operand) else { return .unknown }
        return Truth(test(order))
    }

    /// -1, 0, 1; nil when either is NULL. Numbers before text before blobs, as SQLite orders them.
    static func order(_ a: FieldValue, _ b: FieldValue) -> Int? {
        switch (a, b) {
        case (.null, _), (_, .null): return nil
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .real(let y)): return compare(Double(x), y)
        case (.real(let x), .integer(let y)): return compare(x, Double(y))
        case (.real(let x), .real(let y)): return compare(x, y)
        case (.text(let x), .text(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.blob(let x), .blob(let y)): return bytes(x, y)
        default: return rank(a) < rank(b) ? -1 : 1
        }
    }

    private static func compare(_ x: Double, _ y: Double) -> Int { x < y ? -1 : (x == y ? 0 : 1) }

    private static func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
    }

    private static func rank(_ value: FieldValue) -> Int {
        switch value {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        }
    }
}
