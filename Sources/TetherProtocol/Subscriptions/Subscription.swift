/// One subscription of a partition (issue 51, docs/subscriptions.md): a table and the text of
/// its `where` filter (nil: every row of the table). A partition with subscriptions holds, of
/// each subscribed table, the rows some subscription of that table matches, and nothing of the
/// tables it does not subscribe to.
package struct Subscription: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var table: String
    package var filter: String?

    package init(table: String, filter: String? = nil) {
        self.table = table
        self.filter = filter
    }

    package static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.table, lhs.filter ?? "") < (rhs.table, rhs.filter ?? "")
    }

    /// `table WHERE filter`, or the table alone: what messages and `tetherctl` show.
    package var description: String { filter.map { "\(table) WHERE \($0)" } ?? table }

    /// Checks the filter's syntax and size without the table's schema (a configuration checked
    /// before the store has one); the columns are checked once the schema is known.
    package func checkSyntax() throws(SubscriptionFilterError) {
        guard let filter else { return }
        guard filter.utf8.count <= SubscriptionFilterLimits.maxTextBytes else {
            throw SubscriptionFilterError(.tooLarge("longer than \(SubscriptionFilterLimits.maxTextBytes) bytes"), at: 0)
        }
        var parser = FilterParser(tokens: try FilterLexer.tokens(of: filter))
        _ = try parser.parseFilter()
    }

    /// The subscription parsed and checked against `schema` (its table must be there).
    package func checked(against schema: Schema) throws(SubscriptionSetError) -> CheckedSubscription {
        guard let table = schema.table(self.table) else {
            let names = schema.tables.map(\.name).sorted().joined(separator: ", ")
            throw SubscriptionSetError(.unknownTable("the schema has no table \(self.table) (it has: \(names))"), subscription: self)
        }
        guard let filter else { return CheckedSubscription(table: table, filter: nil) }
        do {
            return CheckedSubscription(table: table, filter: try SubscriptionFilter(filter, table: table))
        } catch {
            throw SubscriptionSetError(.filter(error), subscription: self)
        }
    }
}

/// A subscription whose filter parsed and checked against its table's schema.
package struct CheckedSubscription: Sendable, Hashable {
    package let table: TableSchema
    package let filter: SubscriptionFilter?

    /// With the device's parameters and the time put in.
    package func resolved(with parameters: FilterParameters, now: Double) throws(SubscriptionFilterError) -> ResolvedFilter? {
        try filter?.resolved(with: parameters, now: now, schema: table)
    }
}
