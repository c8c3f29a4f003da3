/// Rows of a table an index can find for a filter: those whose value of one of ``ranges``'
/// columns lies in that range (nil bound: unbounded). Always a superset of the rows the filter
/// matches, never fewer: the server evaluates the filter on each row it finds. An ``exact`` plan
/// finds those rows and no other — what lets a subscription change read only the rows one plan
/// finds and the other does not (``StateSelection/Table/changed(from:to:)``).
package struct IndexPlan: Sendable, Hashable {
    package struct Range: Sendable, Hashable {
        package var column: String
        package var low: [UInt8]?
        package var high: [UInt8]?
        /// Whether a value equal to the bound is in the range (`>=` / `<=`; false: `>` / `<`).
        package var lowInclusive: Bool
        package var highInclusive: Bool

        package init(column: String, low: [UInt8]?, high: [UInt8]?, lowInclusive: Bool = true, highInclusive: Bool = true) {
            self.column = column
            self.low = low
            self.high = high
            self.lowInclusive = lowInclusive
            self.highInclusive = highInclusive
        }

        /// Whether `bytes` (``IndexedValue``) lies in the range.
        package func contains(_ bytes: [UInt8]) -> Bool {
            if let low, bytes.lexicographicallyPrecedes(low) || (!lowInclusive && bytes == low) { return false }
            if let high, high.lexicographicallyPrecedes(bytes) || (!highInclusive && bytes == high) { return false }
            return true
        }
    }

    /// Their union.
    package var ranges: [Range]
    /// Whether the rows found are exactly the rows the filter matches (not only a superset).
    package var exact: Bool

    package init(ranges: [Range], exact: Bool = false) {
        self.ranges = ranges
        self.exact = exact
    }

    /// The columns the plan reads.
    package var columns: Set<String> { Set(ranges.map(\.column)) }
}

extension ResolvedFilter {
    /// How an index over `indexed` columns finds the rows this filter matches, or nil when it
    /// cannot: a comparison other than `!=`, `IN`, `BETWEEN` on an indexed column is served; `AND`
    /// by one served operand (an equality before a range); `OR` only when every operand is
    /// served; `NOT`, `!=`, `IS NULL` and a bare boolean column are not.
    ///
    /// Exact (``IndexPlan/exact``) when the index bytes decide the filter as the evaluation does:
    /// a comparison, `IN` or `BETWEEN` whose literals are not integers of 2^53 or more in
    /// magnitude (those share index bytes with their neighbours: ``IndexedValue``), an `OR` of
    /// exact operands, an `AND` whose operands are all exact single ranges of one column.
    package func indexPlan(indexed: Set<String>) -> IndexPlan? {
        Self.plan(root, indexed).map { IndexPlan(ranges: $0.ranges, exact: $0.exact) }
    }

    private typealias Plan = (ranges: [IndexPlan.Range], exact: Bool)

    private static func plan(_ node: Node, _ indexed: Set<String>) -> Plan? {
        switch node {
        case .compare(let column, let comparison, let value):
            guard indexed.contains(column), let bytes = IndexedValue.encode(value) else { return nil }
            let exact = distinct(value)
            switch comparison {
            case .equal: return ([.init(column: column, low: bytes, high: bytes)], exact)
            case .less: return ([.init(column: column, low: nil, high: bytes, highInclusive: false)], exact)
            case .lessOrEqual: return ([.init(column: column, low: nil, high: bytes)], exact)
            case .greater: return ([.init(column: column, low: bytes, high: nil, lowInclusive: false)], exact)
            case .greaterOrEqual: return ([.init(column: column, low: bytes, high: nil)], exact)
            case .notEqual: return nil
            }
        case .isIn(let column, let values, let negated):
            guard !negated, indexed.contains(column) else { return nil }
            var ranges: [IndexPlan.Range] = []
            for value in values {
                // A NULL in the list matches nothing.
                guard let bytes = IndexedValue.encode(value) else { continue }
                let range = IndexPlan.Range(column: column, low: bytes, high: bytes)
                if !ranges.contains(range) { ranges.append(range) }
            }
            return (ranges, values.allSatisfy(distinct))
        case .between(let column, let low, let high, let negated):
            guard !negated, indexed.contains(column), let lowBytes = IndexedValue.encode(low), let highBytes = IndexedValue.encode(high)
            else { return nil }
            return ([.init(column: column, low: lowBytes, high: highBytes)], distinct(low) && distinct(high))
        case .isNull, .isTrue, .not:
            return nil
        case .and(let all):
            let operands = all.compactMap { plan($0, indexed) }
            // Single ranges on one column narrow each other (`x >= 1 AND x < 9`).
            var narrowed: [String: IndexPlan.Range] = [:]
            for operand in operands where operand.ranges.count == 1 {
                let range = operand.ranges[0]
                narrowed[range.column] = narrowed[range.column].map { intersect($0, range) } ?? range
            }
            // Every operand an exact single range of one column: their intersection is the filter.
            if operands.count == all.count, narrowed.count == 1, let range = narrowed.values.first,
                operands.allSatisfy({ $0.exact && $0.ranges.count == 1 })
            {
                return ([range], true)
            }
            let served = operands.map(\.ranges) + narrowed.values.map { [$0] }
            // The narrowest: equalities, then ranges bounded on both sides, then fewest.
            return served.min { rank($0) < rank($1) }.map { ($0, false) }
        case .or(let all):
            var ranges: [IndexPlan.Range] = []
            var exact = true
            for inner in all {
                guard let served = plan(inner, indexed) else { return nil }
                for range in served.ranges where !ranges.contains(range) { ranges.append(range) }
                exact = exact && served.exact
            }
            return (ranges, exact)
        }
    }

    /// Whether `value`'s index bytes are its own: an integer of 2^53 or more in magnitude is kept
    /// as the nearest double, which the integers next to it may share (while evaluation compares
    /// two integers exactly).
    private static func distinct(_ value: FieldValue) -> Bool {
        guard case .integer(let integer) = value else { return true }
        return integer.magnitude < 1 << 53
    }

    private static func rank(_ ranges: [IndexPlan.Range]) -> (Int, Int, Int) {
        let unbounded = ranges.filter { $0.low == nil || $0.high == nil }.count
        let open = ranges.filter { $0.low != $0.high }.count
        return (unbounded, open, ranges.count)
    }

    /// Both ranges of one column at once (empty ones stay as they are: they find nothing); at
    /// an equal bound, an exclusive one wins.
    private static func intersect(_ a: IndexPlan.Range, _ b: IndexPlan.Range) -> IndexPlan.Range {
        func pick(_ x: [UInt8]?, _ xInclusive: Bool, _ y: [UInt8]?, _ yInclusive: Bool, higher: Bool) -> ([UInt8]?, Bool) {
            guard let x, let y else { return x != nil ? (x, xInclusive) : (y, yInclusive) }
            if x == y { return (x, xInclusive && yInclusive) }
            return x.lexicographicallyPrecedes(y) == higher ? (y, yInclusive) : (x, xInclusive)
        }
        let (low, lowInclusive) = pick(a.low, a.lowInclusive, b.low, b.lowInclusive, higher: true)
        let (high, highInclusive) = pick(a.high, a.highInclusive, b.high, b.highInclusive, higher: false)
        return IndexPlan.Range(column: a.column, low: low, high: high, lowInclusive: lowInclusive, highInclusive: highInclusive)
    }
}
