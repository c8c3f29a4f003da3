/// The `where` of a subscription (issue 51): which rows of one table a device holds, in
/// Tether's own small expression language, parsed and checked against the table's schema, never
/// pasted into SQL as text. docs/subscriptions.md has the grammar:
///
///     shop_id = {tag:shop} AND (price_zone IN ('a', 'b') OR promoted)
///     sensor = {name} AND taken_at >= now() - 7d AND note IS NOT NULL
///
/// A filter holds column names, literals, the device's parameters (`{name}`, `{id}`,
/// `{tag:KEY}`) and `now()` with an offset; ``resolved(with:now:)`` puts the device's values and
/// the time in, giving a ``ResolvedFilter`` that evaluates rows and renders SQL with placeholders.
package struct SubscriptionFilter: Sendable, Hashable {
    /// The text as written (for messages and the configuration's round trip).
    package let text: String
    /// The table it filters.
    package let table: String
    package let expression: FilterExpression

    /// Parses `text` as a filter over `table` and checks it against the table's columns and types.
    package init(_ text: String, table: TableSchema) throws(SubscriptionFilterError) {
        guard text.utf8.count <= SubscriptionFilterLimits.maxTextBytes else {
            throw SubscriptionFilterError(.tooLarge("longer than \(SubscriptionFilterLimits.maxTextBytes) bytes"), at: 0)
        }
        var parser = FilterParser(tokens: try FilterLexer.tokens(of: text))
        let expression = try parser.parseFilter()
        try FilterChecker(table: table).check(expression)
        self.text = text
        self.table = table.name
        self.expression = expression
    }

    /// The parameters the filter names (a device lacking one cannot hold the subscription).
    package var parameters: Set<FilterParameter> {
        Set(expression.operands.compactMap { if case .parameter(let parameter) = $0 { parameter } else { nil } })
    }
}

/// A filter's tree over operands of type `Operand`: ``FilterOperand`` as written
/// (``FilterExpression``), ``FieldValue`` once resolved (``ResolvedFilter``). Predicates compare
/// one column with operands; `and`, `or` and `not` combine them with SQL's three-valued logic (a
/// comparison with NULL is unknown, and only rows for which the whole filter is true match).
package indirect enum FilterTree<Operand: Sendable & Hashable>: Sendable, Hashable {
    case compare(column: String, FilterComparison, Operand)
    case isIn(column: String, [Operand], negated: Bool)
    case between(column: String, Operand, Operand, negated: Bool)
    case isNull(column: String, negated: Bool)
    /// A boolean column on its own (`promoted`): true when it holds 1.
    case isTrue(column: String)
    case and([FilterTree])
    case or([FilterTree])
    case not(FilterTree)

    /// The same tree with each operand replaced by `transform(column, operand)`.
    func map<T, E: Error>(_ transform: (String, Operand) throws(E) -> T) throws(E) -> FilterTree<T> {
        switch self {
        case .compare(let column, let comparison, let operand):
            return .compare(column: column, comparison, try transform(column, operand))
        case .isIn(let column, let operands, let negated):
            var mapped: [T] = []
            for operand in operands { mapped.append(try transform(column, operand)) }
            return .isIn(column: column, mapped, negated: negated)
        case .between(let column, let low, let high, let negated):
            return .between(column: column, try transform(column, low), try transform(column, high), negated: negated)
        case .isNull(let column, let negated):
            return .isNull(column: column, negated: negated)
        case .isTrue(let column):
            return .isTrue(column: column)
        case .and(let all):
            var mapped: [FilterTree<T>] = []
            for inner in all { mapped.append(try inner.map(transform)) }
            return .and(mapped)
        case .or(let all):
            var mapped: [FilterTree<T>] = []
            for inner in all { mapped.append(try inner.map(transform)) }
            return .or(mapped)
        case .not(let inner):
            return .not(try inner.map(transform))
        }
    }

    /// Every operand of the tree, in order.
    var operands: [Operand] {
        switch self {
        case .compare(_, _, let operand): [operand]
        case .isIn(_, let operands, _): operands
        case .between(_, let low, let high, _): [low, high]
        case .isNull, .isTrue: []
        case .and(let all), .or(let all): all.flatMap(\.operands)
        case .not(let inner): inner.operands
        }
    }

    /// Every column the tree names, once each.
    package var columns: Set<String> {
        switch self {
        case .compare(let column, _, _), .isIn(let column, _, _), .between(let column, _, _, _), .isNull(let column, _), .isTrue(let column):
            [column]
        case .and(let all), .or(let all): all.reduce(into: Set<String>()) { $0.formUnion($1.columns) }
        case .not(let inner): inner.columns
        }
    }

    /// Predicates and connectives in the tree (bounded by ``SubscriptionFilterLimits/maxNodes``).
    var nodeCount: Int {
        switch self {
        case .compare, .isNull, .isTrue, .between: 1
        case .isIn(_, let operands, _): 1 + operands.count / 64
        case .and(let all), .or(let all): 1 + all.reduce(0) { $0 + $1.nodeCount }
        case .not(let inner): 1 + inner.nodeCount
        }
    }
}

/// A filter as written: its operands may name the device's parameters and `now()`.
package typealias FilterExpression = FilterTree<FilterOperand>

package enum FilterComparison: String, Sendable, Hashable, CaseIterable {
    case equal = "="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// What a column is compared with.
package enum FilterOperand: Sendable, Hashable {
    case literal(FieldValue)
    case parameter(FilterParameter)
    /// `now()` plus `seconds` (negative for `now() - 7d`): for an integer or real column the Unix
    /// time in seconds, for a text column ISO 8601 in UTC (`2026-11-30T12:00:00.000Z`).
    case now(offsetSeconds: Int64)
}

/// A value the device brings: its name, its id, or one of its enrollment tags. Text; compared
/// with an integer column it must read as an integer.
package enum FilterParameter: Sendable, Hashable, CustomStringConvertible {
    case name
    case id
    case tag(String)

    package var description: String {
        switch self {
        case .name: "{name}"
        case .id: "{id}"
        case .tag(let key): "{tag:\(key)}"
        }
    }
}

/// What the server evaluates for one filter, at most.
package enum SubscriptionFilterLimits {
    package static let maxTextBytes = 4_096
    /// Predicates and connectives (an `IN` list counts one per 64 values).
    package static let maxNodes = 64
    package static let maxInValues = 1_000
    package static let maxDepth = 16
}
