import TetherTOML
import TetherProtocol

/// `[subscriptions]` of `tether-server.toml` (docs/subscriptions.md, "Queryable columns"): the
/// columns the server indexes for subscription filters, and how many rows it evaluates one by
/// one for a filter no index serves.
package struct SubscriptionSettings: Sendable, Hashable {
    /// `queryable`: `table.column` names kept in the filter index; a filter served by them reads
    /// only the rows it can match (Realm's "queryable fields").
    package var queryable: [QueryableColumn] = []
    /// `max_unindexed_rows`: a filtered table no queryable column serves is read and evaluated
    /// row by row up to this many rows; a bigger one refuses the subscription (227 `bad_query`).
    package var maxUnindexedRows = Self.defaultMaxUnindexedRows

    package static let defaultMaxUnindexedRows = 100_000

    package init(queryable: [QueryableColumn] = [], maxUnindexedRows: Int = Self.defaultMaxUnindexedRows) {
        self.queryable = queryable
        self.maxUnindexedRows = maxUnindexedRows
    }

    /// Reads `[subscriptions]`; absent keys keep their defaults.
    static func parse(_ table: ConfigTable?) -> SubscriptionSettings {
        var settings = SubscriptionSettings()
        guard let table else { return settings }
        for (i, name) in (table.stringArray("queryable") ?? []).enumerated() {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                table.problem("queryable[\(i)]", "\(name.debugDescription) is not table.column")
                continue
            }
            let column = QueryableColumn(table: String(parts[0]), column: String(parts[1]))
            if settings.queryable.contains(column) {
                table.problem("queryable[\(i)]", "\(name) is listed twice")
            } else {
                settings.queryable.append(column)
            }
        }
        if let value = table.integer("max_unindexed_rows", range: 0...1_000_000_000) { settings.maxUnindexedRows = value }
        return settings
    }

    /// The problems of ``queryable`` against `schema`: a table or column it lacks, a primary key
    /// (a row's key is not a field: filters on it are evaluated on the key itself).
    package func problems(against schema: Schema) -> [String] {
        queryable.compactMap { column in
            guard let table = schema.tables.first(where: { $0.name == column.table }) else {
                return "\(column): the schema has no table \(column.table.debugDescription)"
            }
            if table.primaryKey == column.column {
                return "\(column): \(column.column) is the table's primary key, which cannot be queryable"
            }
            guard table.columns.contains(where: { $0.name == column.column }) else {
                return "\(column): table \(column.table) has no column \(column.column.debugDescription)"
            }
            return nil
        }
    }
}
