/// One change an application's statement made to a contested row (one written by several
/// agents), as the store's triggers capture it — derived only from the row as the application
/// saw it before and after the statement (docs/store.md): a row that appears is an insert
/// carrying every column, one that disappears a delete, one that stays an update carrying the
/// columns whose value changed; a statement that changed nothing captures nothing.
enum ContestedChange: Hashable, Sendable, CustomStringConvertible {
    typealias Row = CampaignModel.Row

    case insert(Row)
    /// The columns that changed (nil: not carried); `note` may change to null.
    case update(customer: String?, total: Int?, note: String??)
    case delete

    /// The change one statement captured (nil: it changed nothing).
    init?(before: Row?, after: Row?) {
        switch (before, after) {
        case (nil, nil): return nil
        case (nil, let row?): self = .insert(row)
        case (_?, nil): self = .delete
        case (let old?, let new?):
            guard old != new else { return nil }
            self = .update(
                customer: old.customer == new.customer ? nil : new.customer,
                total: old.total == new.total ? nil : new.total,
                note: old.note == new.note ? nil : .some(new.note))
        }
    }

    /// The row after the server applies this change to `row` (nil: absent), by the rules of
    /// docs/sync-model.md "Server order decides", written out here independently of `RowWrite`:
    /// an insert creates the row or, on an existing key, sets every field it carries (all of
    /// them); an update sets its fields if the row exists and is ignored if it is gone; a delete
    /// removes the row if present.
    func applied(to row: Row?) -> Row? {
        switch self {
        case .insert(let inserted): return inserted
        case .delete: return nil
        case .update(let customer, let total, let note):
            guard var row else { return nil }
            if let customer { row.customer = customer }
            if let total { row.total = total }
            if let note { row.note = note }
            return row
        }
    }

    var description: String {
        switch self {
        case .insert(let row): "insert \(row)"
        case .delete: "delete"
        case .update(let customer, let total, let note):
            "update" + (customer.map { " customer=\($0)" } ?? "") + (total.map { " total=\($0)" } ?? "")
                + (note.map { " note=\($0 ?? "null")" } ?? "")
        }
    }
}
