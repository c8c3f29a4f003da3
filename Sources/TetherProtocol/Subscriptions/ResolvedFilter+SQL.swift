/// A resolved filter as SQL: the text holds column names (quoted by the caller's `quote`) and
/// placeholders only; every value is a bound argument, in order. The same rows as
/// ``ResolvedFilter/matches(_:)`` (SQLite's and PostgreSQL's `WHERE` use the same three-valued
/// logic; booleans are 0 and 1 on both, as the stores hold them).
extension ResolvedFilter {
    package struct SQL: Sendable, Hashable {
        package var text: String
        package var arguments: [FieldValue]
    }

    /// `placeholder(n)` spells the n-th argument (1-based): `?` for SQLite, `$n` for PostgreSQL.
    package func sql(placeholder: (Int) -> String, quote: (String) -> String) -> SQL {
        var arguments: [FieldValue] = []
        func bind(_ value: FieldValue) -> String {
            arguments.append(value)
            return placeholder(arguments.count)
        }
        func render(_ node: Node) -> String {
            switch node {
            case .compare(let column, let comparison, let value):
                return "\(quote(column)) \(comparison == .notEqual ? "<>" : comparison.rawValue) \(bind(value))"
            case .isIn(let column, let values, let negated):
                return "\(quote(column)) \(negated ? "NOT IN" : "IN") (\(values.map(bind).joined(separator: ", ")))"
            case .between(let column, let low, let high, let negated):
                return "\(quote(column)) \(negated ? "NOT BETWEEN" : "BETWEEN") \(bind(low)) AND \(bind(high))"
            case .isNull(let column, let negated):
                return "\(quote(column)) IS \(negated ? "NOT NULL" : "NULL")"
            case .isTrue(let column):
                return "\(quote(column)) <> \(bind(.integer(0)))"
            case .and(let all):
                return "(" + all.map(render).joined(separator: " AND ") + ")"
            case .or(let all):
                return "(" + all.map(render).joined(separator: " OR ") + ")"
            case .not(let inner):
                return "NOT (\(render(inner)))"
            }
        }
        let text = render(root)
        return SQL(text: text, arguments: arguments)
    }
}
