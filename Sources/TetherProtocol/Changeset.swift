/// One captured or downloaded change to one row.
///
/// - `insert`: every column but the key; applying it to an existing key merges field by field.
/// - `update`: only the fields that changed, with their new values; ignored when the row is gone
///   (a delete wins over a concurrent update).
/// - `delete`: no fields.
package struct RowChange: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable { case insert, update, delete }

    package var table: String
    package var key: RowKey
    package var kind: Kind
    package var fields: [String: FieldValue]

    package init(table: String, key: RowKey, kind: Kind, fields: [String: FieldValue] = [:]) {
        self.table = table
        self.key = key
        self.kind = kind
        self.fields = kind == .delete ? [:] : fields
    }

    package static func insert(_ table: String, _ key: RowKey, _ fields: [String: FieldValue]) -> Self {
        Self(table: table, key: key, kind: .insert, fields: fields)
    }
    package static func update(_ table: String, _ key: RowKey, _ fields: [String: FieldValue]) -> Self {
        Self(table: table, key: key, kind: .update, fields: fields)
    }
    package static func delete(_ table: String, _ key: RowKey) -> Self {
        Self(table: table, key: key, kind: .delete)
    }
}

/// An ordered list of row changes, applied in order in one transaction.
package struct Changeset: Sendable, Hashable, Codable {
    package var changes: [RowChange]
    package init(_ changes: [RowChange] = []) { self.changes = changes }
    package var isEmpty: Bool { changes.isEmpty }
    package var count: Int { changes.count }
    /// Number of field values carried (for progress and wire-cost figures).
    package var fieldCount: Int { changes.reduce(0) { $0 + max($1.fields.count, 1) } }
}
