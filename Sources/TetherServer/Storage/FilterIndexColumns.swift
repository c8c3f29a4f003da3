import TetherProtocol

/// The columns the server keeps in its filter index (`[subscriptions] queryable`), per table:
/// for each state row of such a table, one index entry per indexed column that is not NULL,
/// its value as ``IndexedValue`` bytes. Both storages keep the entries in `state_index` in the
/// transaction that writes the row, and the set itself in `state_index_columns`, so every
/// writer (and, on PostgreSQL, every instance) maintains the same columns.
package struct FilterIndexColumns: Sendable, Hashable {
    /// Sorted column names per table.
    package let byTable: [String: [String]]
    private let names: [String: [[UInt8]]]

    package static let none = FilterIndexColumns([])

    package init(_ pairs: some Sequence<QueryableColumn>) {
        var byTable: [String: Set<String>] = [:]
        for pair in pairs { byTable[pair.table, default: []].insert(pair.column) }
        self.byTable = byTable.mapValues { $0.sorted() }
        names = self.byTable.mapValues { $0.map { Array($0.utf8) } }
    }

    package var isEmpty: Bool { byTable.isEmpty }

    package var pairs: Set<QueryableColumn> {
        Set(byTable.flatMap { table, columns in columns.map { QueryableColumn(table: table, column: $0) } })
    }

    /// Per table, the indexed columns: what ``StateSelection`` plans with.
    package var indexed: [String: Set<String>] { byTable.mapValues { Set($0) } }

    /// One entry of the index.
    package struct Entry: Sendable, Hashable {
        package var column: String
        package var value: [UInt8]
    }

    /// The entries of a stored row of `table` (its fields as stored; nil: no row).
    package func entries(_ table: String, fields: [UInt8]?) throws(StorageError) -> Set<Entry> {
        guard let fields, let wanted = names[table] else { return [] }
        let values: [String: FieldValue]
        do { values = try FieldValue.decodeFields(fields, only: wanted) } catch { throw .corrupt("state") }
        var entries: Set<Entry> = []
        for (column, value) in values {
            if let bytes = IndexedValue.encode(value) { entries.insert(Entry(column: column, value: bytes)) }
        }
        return entries
    }

    /// What changes in the index when a row of `table` goes from `before` to `after`.
    package func delta(_ table: String, before: [UInt8]?, after: [UInt8]?) throws(StorageError) -> (removed: [Entry], added: [Entry]) {
        guard names[table] != nil else { return ([], []) }
        let old = try entries(table, fields: before)
        let new = try entries(table, fields: after)
        return (Array(old.subtracting(new)), Array(new.subtracting(old)))
    }
}
