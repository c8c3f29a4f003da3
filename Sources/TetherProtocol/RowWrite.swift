/// What one change does to one row that exists or not (docs/sync-model.md, "Server order
/// decides"). The one definition of the row-apply rules: the server applies uploads to its
/// state with it (both storages), every store applies downloads with it, and a client reset
/// replays recovered changes with it. Pure: the caller looks the row up, asks the change
/// (``RowChange/write(rowExists:)``) and performs the write.
package enum RowWrite: Sendable, Hashable {
    /// The row is absent: create it with these fields (a column left out is null).
    case insert([String: FieldValue])
    /// The row exists: set these fields; the other columns keep their values.
    case update([String: FieldValue])
    /// The row exists: remove it.
    case delete
    /// Nothing to write: an update or a delete of a row that is gone.
    case unchanged

    /// The row after the write, for a state held as field maps (nil: the row is absent).
    /// `row` is the row the write was decided for.
    package func applied(to row: [String: FieldValue]?) -> [String: FieldValue]? {
        switch self {
        case .insert(let fields): fields
        case .update(let fields): (row ?? [:]).merging(fields) { _, new in new }
        case .delete: nil
        case .unchanged: row
        }
    }
}

extension RowChange {
    /// The write this change makes to its row:
    /// - `insert` creates the row; on an existing key it sets every field it carries (merge);
    /// - `update` sets the fields it carries if the row exists; it is ignored if the row is
    ///   gone (a delete wins over a concurrent update);
    /// - `delete` removes the row if present; a delete of a missing row does nothing.
    package func write(rowExists: Bool) -> RowWrite {
        switch (kind, rowExists) {
        case (.insert, false): .insert(fields)
        case (.insert, true), (.update, true): .update(fields)
        case (.delete, true): .delete
        case (.update, false), (.delete, false): .unchanged
        }
    }
}
