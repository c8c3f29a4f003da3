/// The ranges of one column holding the values exactly one of two plans finds: what a change
/// between two exact plans of the same column moves, found by scanning only those ranges of the
/// index (``StateSelection/init(changingFrom:to:indexed:)``).
extension IndexPlan {
    /// Where a bound lies on the line of index bytes: just before a value (`v⁻`, so that `v`
    /// follows) or just after it (`v⁺`); nil bytes are the line's ends.
    private struct Position: Comparable {
        var bytes: [UInt8]?
        var after: Bool
        /// `-∞` (start) or `+∞` (end) when `bytes` is nil.
        var isEnd: Bool

        /// One point of the line: a start and an end may meet there.
        static func == (a: Position, b: Position) -> Bool {
            a.bytes == b.bytes && (a.bytes == nil ? a.isEnd == b.isEnd : a.after == b.after)
        }

        static func < (a: Position, b: Position) -> Bool {
            switch (a.bytes, b.bytes) {
            case (nil, nil): return !a.isEnd && b.isEnd
            case (nil, _): return !a.isEnd
            case (_, nil): return b.isEnd
            case (let x?, let y?):
                if x == y { return !a.after && b.after }
                return x.lexicographicallyPrecedes(y)
            }
        }
    }

    /// The values exactly one of `a` and `b` finds, as disjoint ranges of their one column;
    /// nil when either plan is not exact or they do not find by one and the same column.
    package static func symmetricDifference(_ a: IndexPlan, _ b: IndexPlan) -> IndexPlan? {
        guard a.exact, b.exact, let column = a.ranges.first?.column ?? b.ranges.first?.column,
            a.columns.isSubset(of: [column]), b.columns.isSubset(of: [column])
        else { return nil }
        // Every range's start (+1) and end (−1), per plan; an empty range adds nothing.
        var events: [(position: Position, plan: Int, step: Int)] = []
        for (index, plan) in [a, b].enumerated() {
            for range in plan.ranges {
                let start = Position(bytes: range.low, after: !range.lowInclusive, isEnd: false)
                let end = Position(bytes: range.high, after: range.highInclusive, isEnd: true)
                guard start < end else { continue }
                events.append((start, index, 1))
                events.append((end, index, -1))
            }
        }
        events.sort { $0.position < $1.position }
        var ranges: [Range] = []
        var depth = [0, 0]
        var open: Position? = nil
        var i = 0
        while i < events.count {
            let position = events[i].position
            while i < events.count, events[i].position == position {
                depth[events[i].plan] += events[i].step
                i += 1
            }
            let inside = (depth[0] > 0) != (depth[1] > 0)
            if inside, open == nil {
                open = position
            } else if !inside, let start = open {
                ranges.append(Range(
                    column: column, low: start.bytes, high: position.bytes, lowInclusive: !start.after, highInclusive: position.after))
                open = nil
            }
        }
        return IndexPlan(ranges: ranges, exact: true)
    }
}
