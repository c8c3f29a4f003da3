/// One `table.column` of `[subscriptions] queryable`.
package struct QueryableColumn: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var table: String
    package var column: String

    package init(table: String, column: String) {
        self.table = table
        self.column = column
    }

    package var description: String { "\(table).\(column)" }

    package static func < (a: QueryableColumn, b: QueryableColumn) -> Bool { (a.table, a.column) < (b.table, b.column) }
}
