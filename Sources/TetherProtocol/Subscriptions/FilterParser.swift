/// Recursive descent over ``FilterToken``s (docs/subscriptions.md "Grammar"):
///
///     filter    := or
///     or        := and ("OR" and)*
///     and       := not ("AND" not)*
///     not       := "NOT" not | "(" or ")" | predicate
///     predicate := column ( cmp operand | ["NOT"] "IN" "(" operand ("," operand)* ")"
///                  | "IS" ["NOT"] "NULL" | ["NOT"] "BETWEEN" operand "AND" operand )?
///     operand   := integer | real | 'text' | TRUE | FALSE | {parameter} | "now" "(" ")" [("+"|"-") duration]
///                  | "-" (integer | real)
struct FilterParser {
    private let tokens: [FilterToken]
    private var position = 0
    private var depth = 0

    init(tokens: [FilterToken]) {
        self.tokens = tokens
    }

    mutating func parseFilter() throws(SubscriptionFilterError) -> FilterExpression {
        let expression = try parseOr()
        guard case .end = current.kind else { throw error("expected AND, OR or the end of the filter", current) }
        guard expression.nodeCount <= SubscriptionFilterLimits.maxNodes else {
            throw SubscriptionFilterError(.tooLarge("more than \(SubscriptionFilterLimits.maxNodes) predicates and connectives"), at: 0)
        }
        return expression
    }

    private var current: FilterToken { tokens[position] }

    private mutating func advance() -> FilterToken {
        defer { position = min(position + 1, tokens.count - 1) }
        return tokens[position]
    }

    private func error(_ message: String, _ token: FilterToken) -> SubscriptionFilterError {
        SubscriptionFilterError(.syntax(message), at: token.offset)
    }

    private mutating func expectSymbol(_ symbol: String, _ what: String) throws(SubscriptionFilterError) {
        guard case .symbol(symbol) = current.kind else { throw error("expected \(what)", current) }
        _ = advance()
    }

    private mutating func parseOr() throws(SubscriptionFilterError) -> FilterExpression {
        var terms = [try parseAnd()]
        while current.isKeyword("OR") {
            _ = advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws(SubscriptionFilterError) -> FilterExpression {
        var terms = [try parseNot()]
        while current.isKeyword("AND") {
            _ = advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws(SubscriptionFilterError) -> FilterExpression {
        depth += 1
        defer { depth -= 1 }
        guard depth <= SubscriptionFilterLimits.maxDepth else {
            throw SubscriptionFilterError(.tooLarge("nested deeper than \(SubscriptionFilterLimits.maxDepth)"), at: current.offset)
        }
        if current.isKeyword("NOT") {
            _ = advance()
            return .not(try parseNot())
        }
        if case .symbol("(") = current.kind {
            _ = advance()
            let inner = try parseOr()
            try expectSymbol(")", "')'")
            return inner
        }
        return try parsePredicate()
    }

    private mutating func parsePredicate() throws(SubscriptionFilterError) -> FilterExpression {
        let start = current
        guard case .identifier(let column, let quoted) = start.kind, quoted || !Self.reserved.contains(column.uppercased()) else {
            throw error("expected a column name", start)
        }
        _ = advance()
        let token = current
        switch token.kind {
        case .symbol(let symbol):
            guard let comparison = FilterComparison(rawValue: symbol) else { return .isTrue(column: column) }
            _ = advance()
            return .compare(column: column, comparison, try parseOperand())
        case .identifier(_, quoted: false):
            if token.isKeyword("IS") {
                _ = advance()
                let negated = current.isKeyword("NOT")
                if negated { _ = advance() }
                guard current.isKeyword("NULL") else { throw error("expected NULL after IS", current) }
                _ = advance()
                return .isNull(column: column, negated: negated)
            }
            let negated = token.isKeyword("NOT")
            if negated { _ = advance() }
            if current.isKeyword("IN") {
                _ = advance()
                try expectSymbol("(", "'(' after IN")
                var operands = [try parseOperand()]
                while case .symbol(",") = current.kind {
                    _ = advance()
                    operands.append(try parseOperand())
                    guard operands.count <= SubscriptionFilterLimits.maxInValues else {
                        throw SubscriptionFilterError(.tooLarge("more than \(SubscriptionFilterLimits.maxInValues) values in one IN"), at: current.offset)
                    }
                }
                try expectSymbol(")", "')' or ',' in the IN list")
                return .isIn(column: column, operands, negated: negated)
            }
            if current.isKeyword("BETWEEN") {
                _ = advance()
                let low = try parseOperand()
                guard current.isKeyword("AND") else { throw error("expected AND in BETWEEN", current) }
                _ = advance()
                return .between(column: column, low, try parseOperand(), negated: negated)
            }
            if negated { throw error("expected IN or BETWEEN after NOT", current) }
            return .isTrue(column: column)
        default:
            return .isTrue(column: column)
        }
    }

    private mutating func parseOperand() throws(SubscriptionFilterError) -> FilterOperand {
        let token = advance()
        switch token.kind {
        case .integer(let value): return .literal(.integer(value))
        case .real(let value): return .literal(.real(value))
        case .string(let value): return .literal(.text(value))
        case .parameter(let parameter): return .parameter(parameter)
        case .symbol("-"):
            switch advance().kind {
            case .integer(let value): return .literal(.integer(-value))
            case .real(let value): return .literal(.real(-value))
            default: throw error("expected a number after '-'", token)
            }
        case .identifier(let word, quoted: false):
            switch word.uppercased() {
            case "TRUE": return .literal(.integer(1))
            case "FALSE": return .literal(.integer(0))
            case "NULL": throw error("a comparison with NULL is never true: use IS NULL or IS NOT NULL", token)
            case "NOW":
                try expectSymbol("(", "'(' after now")
                try expectSymbol(")", "')' after now(")
                guard case .symbol(let sign) = current.kind, sign == "-" || sign == "+" else { return .now(offsetSeconds: 0) }
                _ = advance()
                guard case .duration(let seconds) = advance().kind else {
                    throw error("expected a duration after now() \(sign) (90s, 15m, 36h, 7d, 2w)", current)
                }
                return .now(offsetSeconds: sign == "-" ? -seconds : seconds)
            default:
                throw error("expected a value, a {parameter} or now(): a column cannot be compared with another column", token)
            }
        default:
            throw error("expected a value, a {parameter} or now()", token)
        }
    }

    /// Words that are never column names unless quoted.
    static let reserved: Set<String> = ["AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "TRUE", "FALSE", "NOW"]
}
