/// A grant's read subscriptions (issue 51): the server may impose, per table, filters a device
/// may hold rows of that table only through. What a session holds is then the intersection of
/// the scope it asks for and the imposed one.
extension SubscriptionScope {
    /// The scope of an imposed set (nil: nothing imposed) for a device with `parameters` at
    /// `now`: each table it names is restricted to its filters (one without a filter is not
    /// restricted); the tables it does not name are not restricted. Read it with
    /// ``narrowed(by:schema:)``, never as a device's own scope (where an absent table is not held).
    package init(
        imposing set: SubscriptionSet?, schema: Schema, parameters: FilterParameters, now: Double
    ) throws(SubscriptionSetError) {
        guard let set, !set.subscriptions.isEmpty else {
            self.init(tables: nil)
            return
        }
        try self.init(resolving: set, schema: schema, parameters: parameters, now: now)
    }

    /// This scope (a device's own) narrowed by `imposed` (``init(imposing:schema:parameters:now:)``):
    /// a row is held when this scope holds it and, of a table `imposed` restricts, one of the
    /// imposed filters matches it too. A whole-partition scope becomes every table of `schema`,
    /// whole but for the restricted ones. An imposed scope that restricts nothing leaves this
    /// scope as it is (the whole partition stays ``SubscriptionScope/whole``).
    package func narrowed(by imposed: SubscriptionScope, schema: Schema) -> SubscriptionScope {
        guard let restricting = imposed.tables?.filter({ $0.value != .wholeTable }), !restricting.isEmpty else { return self }
        let own = tables ?? Dictionary(uniqueKeysWithValues: schema.tables.map { ($0.name, TableScope.wholeTable) })
        var narrowed: [String: TableScope] = [:]
        for (table, mine) in own {
            switch (mine, restricting[table]) {
            case (_, nil), (_, .wholeTable?):
                narrowed[table] = mine
            case (.wholeTable, let theirs?):
                narrowed[table] = theirs
            case (.filtered(let mine, let primaryKey), .filtered(let theirs, _)?):
                let root = ResolvedFilter.Node.and([Self.anyOf(mine), Self.anyOf(theirs)])
                narrowed[table] = .filtered([ResolvedFilter(table: table, root: root)], primaryKey: primaryKey)
            }
        }
        return SubscriptionScope(tables: narrowed)
    }

    /// One tree true when one of `filters` is (never empty: a filtered table has a filter).
    private static func anyOf(_ filters: [ResolvedFilter]) -> ResolvedFilter.Node {
        filters.count == 1 ? filters[0].root : .or(filters.map(\.root))
    }
}
