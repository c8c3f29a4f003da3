/// Rows of a table an index can find for a filter: those whose value of one of ``ranges``'
/// columns lies in that range (bounds inclusive; nil: unbounded). Always a superset of the rows
/// the filter matches, never fewer: the server evaluates the filter on each row it finds.
package struct IndexPlan: Sendable, Hashable {
    package struct Range: Sendable, Hashable {
        package var column: String
        package var low: [UInt8]?
        package var high: [UInt8]?

        package init(column: String, low: [UInt8]?, high: [UInt8]?) {
            self.column = column
            self.low = low
            self.high = high
        }

        /// Whether `bytes` (``IndexedValue``) lies in the range.
        package func contains(_ bytes: [UInt8]) -> Bool {
            if let low, bytes.lexicographicallyPrecedes(low) { return false }
            if let high, high.lexicographicallyPrecedes(bytes) { return false }
            return true
        }
    }

    /// Their union.
    package var ranges: [Range]

    package init(ranges: [Range]) { self.ranges = ranges }

    /// The columns the plan reads.
    package var columns: Set<String> { Set(ranges.map(\.column)) }
}

extension ResolvedFilter {
    /// How an index over `indexed` columns finds the rows this filter matches, or nil when it
    /// cannot: a comparison other than `!=`, `IN`, `BETWEEN` on an indexed column is served; `AND`
    /// by one served operand (an equality before a range); `OR` only when every operand is
    /// served; `NOT`, `!=`, `IS NULL` and a bare boolean column are not.
    package func indexPlan(indexed: Set<String>) -> IndexPlan? {
        Self.plan(root, indexed).map { IndexPlan(ranges: $0) }
    }

    private static func plan(_ node: Node, _ indexed: Set<String>) -> [IndexPlan.Range]? {
        switch node {
        case .compare(let column, let comparison, let value):
            guard indexed.contains(column), let bytes = IndexedValue.encode(value) else { return nil }
            switch comparison {
            case .equal: return [.init(column: column, low: bytes, high: bytes)]
            case .less, .lessOrEqual: return [.init(column: column, low: nil, high: bytes)]
            case .greater, .greaterOrEqual: return [.init(column: column, low: bytes, high: nil)]
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
            return ranges
        case .between(let column, let low, let high, let negated):
            guard !negated, indexed.contains(column), let lowBytes = IndexedValue.encode(low), let highBytes = IndexedValue.encode(high)
            else { return nil }
            return [.init(column: column, low: lowBytes, high: highBytes)]
        case .isNull, .isTrue, .not:
            return nil
        case .and(let all):
            var served = all.compactMap { plan($0, indexed) }
            // Single ranges on one column narrow each other (`x >= 1 AND x < 9`).
            var narrowed: [String: IndexPlan.Range] = [:]
            for ranges in served where ranges.count == 1 {
                let range = ranges[0]
                narrowed[range.column] = narrowed[range.column].map { intersect($0, range) } ?? range
            }
            served += narrowed.values.map { [$0] }
            // The narrowest: equalities, then ranges bounded on both sides, then fewest.
            return served.min { rank($0) < rank($1) }
        case .or(let all):
            var ranges: [IndexPlan.Range] = []
            for inner in all {
                guard let served = plan(inner, indexed) else { return nil }
                for range in served where !ranges.contains(range) { ranges.append(range) }
            }
            return ranges
        }
    }

    private static func rank(_ ranges: [IndexPlan.Range]) -> (Int, Int, Int) {
        let unbounded = ranges.filter { $0.low == nil || $0.high == nil }.count
        let open = ranges.filter { $0.low != $0.high }.count
        return (unbounded, open, ranges.count)
    }

    /// Both ranges of one column at once (empty ones stay as they are: they find nothing).
    private static func intersect(_ a: IndexPlan.Range, _ b: IndexPlan.Range) -> IndexPlan.Range {
        func higher(_ x: [UInt8]?, _ y: [UInt8]?) -> [UInt8]? {
            guard let x, let y else { return x ?? y }
            return x.lexicographicallyPrecedes(y) ? y : x
        }
        func lower(_ x: [UInt8]?, _ y: [UInt8]?) -> [UInt8]? {
            guard let x, let y else { return x ?? y }
            return x.lexicographicallyPrecedes(y) ? x : y
        }
        return IndexPlan.Range(column: a.column, low: higher(a.low, b.low), high: lower(a.high, b.high))
    }
}
