/// Which rows of a partition a state read returns: every row (``whole``), or per table every
/// row or the candidates an index finds (a superset of the rows the scope holds, which the
/// reader's caller still evaluates). Tables absent from ``tables`` are not read at all.
package struct StateSelection: Sendable, Hashable {
    package enum Table: Sendable, Hashable {
        case all
        case candidates(IndexPlan)
        /// The rows one of two exact plans finds and the other does not: those a change from
        /// one filter to the other moves (a row both find stays, as does one neither finds).
        case changed(from: IndexPlan, to: IndexPlan)
    }

    /// What a read is for.
    package enum Purpose: Sendable, Hashable {
        /// The rows any of these scopes may hold.
        case holdable([SubscriptionScope])
        /// The rows a store changing from one scope to the other gains or loses.
        case changing(from: SubscriptionScope, to: SubscriptionScope)

        package var isChange: Bool {
            if case .changing = self { return true }
            return false
        }
    }

    /// nil: the whole partition.
    package var tables: [String: Table]?

    package static let whole = StateSelection(tables: nil)

    package init(tables: [String: Table]?) {
        self.tables = tables
    }

    /// The selection for `purpose` with the columns `indexed` per table.
    package init(_ purpose: Purpose, indexed: [String: Set<String>]) {
        switch purpose {
        case .holdable(let scopes): self.init(scopes, indexed: indexed)
        case .changing(let held, let wanted): self.init(changingFrom: held, to: wanted, indexed: indexed)
        }
    }

    /// The union of what `scopes` hold, found with the columns `indexed` per table (a table's
    /// primary key is never an indexed column: its value is the row's key, not a field).
    package init(_ scopes: [SubscriptionScope], indexed: [String: Set<String>]) {
        var tables: [String: Table] = [:]
        for scope in scopes {
            guard let scoped = scope.tables else {
                self.init(tables: nil)
                return
            }
            for (table, tableScope) in scoped {
                tables[table] = Self.union(tables[table], Self.rows(of: table, tableScope, indexed: indexed))
            }
        }
        self.init(tables: tables)
    }

    /// The rows a store whose scope changes from `held` to `wanted` gains or loses, and no table
    /// both hold alike: a table both hold whole or by the same filters is not read; of a table
    /// both filter by exact plans (``IndexPlan/exact``), only the rows one finds and the other
    /// does not (of one column, the ranges between the two plans: ``IndexPlan/symmetricDifference(_:_:)``);
    /// else the union of what both may hold.
    package init(changingFrom held: SubscriptionScope, to wanted: SubscriptionScope, indexed: [String: Set<String>]) {
        guard let heldTables = held.tables, let wantedTables = wanted.tables else {
            if held.tables == nil && wanted.tables == nil {
                self.init(tables: [:])  // both the whole partition: nothing moves
            } else {
                self.init([held, wanted], indexed: indexed)
            }
            return
        }
        var tables: [String: Table] = [:]
        for table in Set(heldTables.keys).union(wantedTables.keys) {
            let (before, after) = (heldTables[table], wantedTables[table])
            if before == after { continue }
            let rows = [before, after].compactMap { $0.map { Self.rows(of: table, $0, indexed: indexed) } }
            if rows.count == 2, case .candidates(let from) = rows[0], case .candidates(let to) = rows[1], from.exact, to.exact {
                // Of one column, the ranges between them; else the keys one finds and the other does not.
                tables[table] = IndexPlan.symmetricDifference(from, to).map { .candidates($0) } ?? .changed(from: from, to: to)
            } else {
                tables[table] = rows.reduce(nil, Self.union)
            }
        }
        self.init(tables: tables)
    }

    /// The rows of `table` its scope may hold, found with the `indexed` columns.
    private static func rows(of table: String, _ scope: SubscriptionScope.TableScope, indexed: [String: Set<String>]) -> Table {
        guard case .filtered(let filters, let primaryKey) = scope else { return .all }
        let columns = (indexed[table] ?? []).subtracting([primaryKey])
        var ranges: [IndexPlan.Range] = []
        var exact = true
        for filter in filters {
            guard let plan = filter.indexPlan(indexed: columns) else { return .all }
            for range in plan.ranges where !ranges.contains(range) { ranges.append(range) }
            exact = exact && plan.exact
        }
        return .candidates(IndexPlan(ranges: ranges, exact: exact))
    }

    /// Rows either selection reads.
    private static func union(_ a: Table?, _ b: Table) -> Table {
        switch (a, b) {
        case (nil, _): return b
        case (.candidates(var plan)?, .candidates(let more)):
            for range in more.ranges where !plan.ranges.contains(range) { plan.ranges.append(range) }
            plan.exact = plan.exact && more.exact
            return .candidates(plan)
        default: return .all
        }
    }

    /// The tables whose rows read are exactly those wanted (candidates of an exact plan): no
    /// filter needs evaluating on them.
    package static func exactTables(of ordered: [(table: String, rows: Table)]?) -> Set<String> {
        Set((ordered ?? []).compactMap { table, rows in
            guard case .candidates(let plan) = rows, plan.exact else { return nil }
            return table
        })
    }

    /// The tables to read in name order, each with its rows; nil: the whole partition.
    package var ordered: [(table: String, rows: Table)]? {
        tables.map { tables in tables.sorted { $0.key < $1.key }.map { (table: $0.key, rows: $0.value) } }
    }

    /// The filtered tables of `scope` no index serves (read whole and evaluated row by row).
    package static func unserved(_ scope: SubscriptionScope, indexed: [String: Set<String>]) -> [String] {
        guard let scoped = scope.tables, let selected = StateSelection([scope], indexed: indexed).tables else { return [] }
        return scoped.compactMap { table, tableScope in
            guard case .filtered = tableScope, case .all? = selected[table] else { return nil }
            return table
        }.sorted()
    }
}
