import TetherStore

extension StoreError {
    /// `column orders.x: the column is not in the schema` — what differs, without the path.
    var schemaAlterationSummary: String {
        guard case .schemaMismatch(_, let table, let column, let problem) = self else { return description }
        return column.map { "column \(table).\($0): \(problem)" } ?? "table \(table): \(problem)"
    }
}
