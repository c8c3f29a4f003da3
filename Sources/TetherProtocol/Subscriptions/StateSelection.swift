/// Which rows of a partition a state read returns: every row (``whole``), or per table every
/// row or the candidates an index finds (a superset of the rows the scope holds, which the
/// reader's caller still evaluates). Tables absent from ``tables`` are not read at all.
package struct StateSelection: Sendable, Hashable {
    package enum Table: Sendable, Hashable {
        case all
        case candidates(IndexPlan)
    }

    /// nil: the whole partition.
    package var tables: [String: Table]?

    package static let whole = StateSelection(tables: nil)

    package init(tables: [String: Table]?) {
        self.tables = tables
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
                let wanted: Table
                switch tableScope {
                case .wholeTable:
                    wanted = .all
                case .filtered(let filters, let primaryKey):
                    let columns = (indexed[table] ?? []).subtracting([primaryKey])
                    var ranges: [IndexPlan.Range] = []
                    var served = true
                    for filter in filters {
                        guard let plan = filter.indexPlan(indexed: columns) else {
                            served = false
                            break
                        }
                        for range in plan.ranges where !ranges.contains(range) { ranges.append(range) }
                    }
                    wanted = served ? .candidates(IndexPlan(ranges: ranges)) : .all
                }
                switch (tables[table], wanted) {
                case (nil, _):
                    tables[table] = wanted
                case (.all?, _), (_, .all):
                    tables[table] = .all
                case (.candidates(var plan)?, .candidates(let more)):
                    for range in more.ranges where !plan.ranges.contains(range) { plan.ranges.append(range) }
                    tables[table] = .candidates(plan)
                }
            }
        }
        self.init(tables: tables)
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
