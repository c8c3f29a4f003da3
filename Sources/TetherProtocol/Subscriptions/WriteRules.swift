/// What a device may write beyond its subscriptions (issue 51): the write rules of the grants
/// that let it write the partition, resolved for it. A grant may carry, per table, a filter the
/// row must match before and after a change, and columns the device may not change. A change is
/// allowed when one of the grants allows it: a grant without a rule for the table allows every
/// change to it.
package struct WriteRules: Sendable, Hashable {
    /// One grant's rule for one table.
    package struct Rule: Sendable, Hashable {
        /// nil: any row (only the read-only columns restrict). A rule whose filter could not be
        /// resolved for the device (a tag it lacks) is `.refuseAll`.
        package var filter: ResolvedFilter?
        package var readOnly: Set<String>
        package var refuseAll: Bool

        package init(filter: ResolvedFilter?, readOnly: Set<String> = [], refuseAll: Bool = false) {
            self.filter = filter
            self.readOnly = readOnly
            self.refuseAll = refuseAll
        }
    }

    /// Per table, the alternatives (one per grant); a table absent is unrestricted.
    package var tables: [String: [Rule]]
    /// Per table, its primary key column (filters may name it).
    package var primaryKeys: [String: String]

    package init(tables: [String: [Rule]] = [:], primaryKeys: [String: String] = [:]) {
        self.tables = tables
        self.primaryKeys = primaryKeys
    }

    package static let none = WriteRules()

    package var isEmpty: Bool { tables.isEmpty }

    /// nil when a change of `kind` turning `before` into `after` (nil: absent; fields without the
    /// key) is allowed by one of the table's rules; otherwise why not.
    package func refusal(
        of kind: RowChange.Kind, table: String, key: RowKey, before: [String: FieldValue]?, after: [String: FieldValue]?
    ) -> CompensatingWrite? {
        guard let rules = tables[table], !rules.isEmpty else { return nil }
        var reason = CompensatingWrite.Reason.writeRule
        var column: String? = nil
        for rule in rules {
            if rule.refuseAll { continue }
            if let filter = rule.filter {
                let primaryKey = primaryKeys[table] ?? ""
                func matches(_ fields: [String: FieldValue]) -> Bool {
                    var row = fields
                    row[primaryKey] = key.fieldValue
                    return filter.matches(row)
                }
                if let before, !matches(before) { continue }
                if let after, !matches(after) { continue }
            }
            // A read-only column may not change on a row that exists; a new row may carry it.
            if let before, let changed = rule.readOnly.sorted().first(where: { (after?[$0] ?? .null) != (before[$0] ?? .null) && after != nil }) {
                reason = .readOnlyColumn
                column = changed
                continue
            }
            return nil
        }
        let message: String =
            switch reason {
            case .readOnlyColumn: "the \(kind.rawValue) changes column \(column ?? "") of \(table), which the grant makes read-only"
            default: "the \(kind.rawValue) of a row of \(table) breaks the grant's write rule"
            }
        return CompensatingWrite(table: table, key: key, reason: reason, message: message)
    }
}
