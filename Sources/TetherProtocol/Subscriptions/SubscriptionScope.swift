/// What one session may hold of a partition: the whole partition, or per subscribed table the
/// whole table or the rows its resolved filters match (a row is held when one of them matches).
/// Built when a session binds from the set it wants, the schema, the device's parameters and the
/// time; evaluates rows for the server's state reads, history and write checks.
package struct SubscriptionScope: Sendable, Hashable {
    /// Of one subscribed table.
    package enum TableScope: Sendable, Hashable {
        case wholeTable
        /// The filters, and the table's primary key column (a filter may name it; a stored row's
        /// fields do not hold it).
        case filtered([ResolvedFilter], primaryKey: String)
    }

    /// Per filtered table, the columns its filters name other than the key, as UTF-8: what
    /// ``holds(_:key:storedFields:)`` reads of a stored row.
    private var columnBytes: [String: [[UInt8]]] = [:]

    /// nil: the whole partition.
    package let tables: [String: TableScope]?

    package static let whole = SubscriptionScope(tables: nil)

    package init(tables: [String: TableScope]?) {
        self.tables = tables
        for (table, scope) in tables ?? [:] {
            guard case .filtered(let filters, let primaryKey) = scope else { continue }
            let columns = filters.reduce(into: Set<String>()) { $0.formUnion($1.root.columns) }.subtracting([primaryKey])
            columnBytes[table] = columns.sorted().map { Array($0.utf8) }
        }
    }

    /// The scope of `set` (nil: the whole partition) for a device with `parameters` at `now`
    /// (seconds since 1970): every subscription checked against `schema` and resolved.
    package init(
        resolving set: SubscriptionSet?, schema: Schema, parameters: FilterParameters, now: Double
    ) throws(SubscriptionSetError) {
        guard let set else {
            self.init(tables: nil)
            return
        }
        var tables: [String: TableScope] = [:]
        for subscription in set.subscriptions {
            let checked = try subscription.checked(against: schema)
            let resolved: ResolvedFilter?
            do {
                resolved = try checked.resolved(with: parameters, now: now)
            } catch {
                throw SubscriptionSetError(.filter(error), subscription: subscription)
            }
            switch (tables[subscription.table], resolved) {
            case (.wholeTable?, _), (_, nil):
                tables[subscription.table] = .wholeTable
            case (.filtered(let filters, let key)?, let filter?):
                tables[subscription.table] = .filtered(filters + [filter], primaryKey: key)
            case (nil, let filter?):
                tables[subscription.table] = .filtered([filter], primaryKey: checked.table.primaryKey)
            }
        }
        self.init(tables: tables)
    }

    package var isWhole: Bool { tables == nil }

    /// Whether the scope may hold rows of `table`.
    package func covers(_ table: String) -> Bool {
        guard let tables else { return true }
        return tables[table] != nil
    }

    /// Whether the scope holds every row of `table`.
    package func coversWhole(_ table: String) -> Bool {
        guard let tables else { return true }
        if case .wholeTable? = tables[table] { return true }
        return false
    }

    /// ``holds(_:key:_:)`` of a stored row (its key as ``RowKey/encoded``, its fields as
    /// ``FieldValue/encodedFields(_:)``): the key is read only for a filtered table, and of the
    /// fields only the columns the table's filters name.
    package func holds(_ table: String, storedKey: [UInt8], storedFields: [UInt8]) throws(WireDecodeError) -> Bool {
        guard let tables else { return true }
        switch tables[table] {
        case nil: return false
        case .wholeTable?: return true
        case .filtered?:
            return holds(table, key: try RowKey.decode(storedKey), try FieldValue.decodeFields(storedFields, only: columnBytes[table] ?? []))
        }
    }

    /// Whether the scope holds the row of `table` with this key and these fields (every column
    /// but the key, as a stored row or an insert has them).
    package func holds(_ table: String, key: RowKey, _ fields: [String: FieldValue]) -> Bool {
        guard let tables else { return true }
        switch tables[table] {
        case nil: return false
        case .wholeTable?: return true
        case .filtered(let filters, let primaryKey)?:
            var row = fields
            row[primaryKey] = key.fieldValue
            return filters.contains { $0.matches(row) }
        }
    }
}
