/// The differences between two schemas, classified as docs/contract.md "Reset modes" needs: adding a table or a
/// nullable column is non-breaking; anything else is breaking.
package struct SchemaDiff: Sendable, Hashable {
    package enum Difference: Sendable, Hashable, CustomStringConvertible {
        case tableAdded(String)
        case tableRemoved(String)
        case columnAdded(table: String, column: ColumnSchema)
        case columnRemoved(table: String, column: String)
        case columnTypeChanged(table: String, column: String, from: String, to: String)
        case primaryKeyChanged(table: String, from: String, to: String)

        package var isBreaking: Bool {
            switch self {
            case .tableAdded: false
            case .columnAdded(_, let column): !column.nullable
            case .tableRemoved, .columnRemoved, .columnTypeChanged, .primaryKeyChanged: true
            }
        }

        package var description: String {
            let kind = isBreaking ? "breaking" : "non-breaking"
            return switch self {
            case .tableAdded(let t): "table \(t) added (\(kind))"
            case .tableRemoved(let t): "table \(t) removed (\(kind))"
            case .columnAdded(let t, let c): "column \(t).\(c.name) \(c.typeSpelling) added (\(kind)\(c.nullable ? "" : ": not nullable"))"
            case .columnRemoved(let t, let c): "column \(t).\(c) removed (\(kind))"
            case .columnTypeChanged(let t, let c, let from, let to): "column \(t).\(c) changed from \(from) to \(to) (\(kind))"
            case .primaryKeyChanged(let t, let from, let to): "primary key of \(t) changed from \(from) to \(to) (\(kind))"
            }
        }
    }

    package var differences: [Difference]

    package init(from old: Schema, to new: Schema) {
        var differences: [Difference] = []
        for table in new.tables where old.table(table.name) == nil {
            differences.append(.tableAdded(table.name))
        }
        for oldTable in old.tables {
            guard let newTable = new.table(oldTable.name) else {
                differences.append(.tableRemoved(oldTable.name))
                continue
            }
            if oldTable.primaryKey != newTable.primaryKey {
                differences.append(.primaryKeyChanged(table: oldTable.name, from: oldTable.primaryKey, to: newTable.primaryKey))
            }
            for column in newTable.columns where oldTable.column(column.name) == nil {
                differences.append(.columnAdded(table: oldTable.name, column: column))
            }
            for column in oldTable.columns {
                guard let newColumn = newTable.column(column.name) else {
                    differences.append(.columnRemoved(table: oldTable.name, column: column.name))
                    continue
                }
                if newColumn != column {
                    differences.append(.columnTypeChanged(
                        table: oldTable.name, column: column.name, from: column.typeSpelling, to: newColumn.typeSpelling))
                }
            }
        }
        self.differences = differences
    }

    package var isEmpty: Bool { differences.isEmpty }
    package var isBreaking: Bool { differences.contains { $0.isBreaking } }
    /// One line per difference, for `schema apply` and error messages.
    package var summary: [String] { differences.map(\.description) }
}
