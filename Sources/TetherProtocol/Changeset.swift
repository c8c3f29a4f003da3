/// One captured or downloaded change to one row.
///
/// - `insert`: every column but the key; applying it to an existing key merges field by field.
/// - `update`: only the fields that changed, with their new values; ignored when the row is gone
///   (a delete wins over a concurrent update).
/// - `delete`: no fields.
public struct RowChange: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable { case insert, update, delete }

    public var table: String
    public var key: RowKey
    public var kind: Kind
    public var fields: [String: FieldValue]

    public init(table: String, key: RowKey, kind: Kind, fields: [String: FieldValue] = [:]) {
        self.table = table
        self.key = key
        self.kind = kind
        self.fields = kind == .delete ? [:] : fields
    }

    public static func insert(_ table: String, _ key: RowKey, _ fields: [String: FieldValue]) -> Self {
        Self(table: table, key: key, kind: .insert, fields: fields)
    }
    public static func update(_ table: String, _ key: RowKey, _ fields: [String: FieldValue]) -> Self {
        Self(table: table, key: key, kind: .update, fields: fields)
    }
    public static func delete(_ table: String, _ key: RowKey) -> Self {
        Self(table: table, key: key, kind: .delete)
    }
}

/// An ordered list of row changes, applied in order in one transaction.
public struct Changeset: Sendable, Hashable, Codable {
    public var changes: [RowChange]
    public init(_ changes: [RowChange] = []) { self.changes = changes }
    public var isEmpty: Bool { changes.isEmpty }
    public var count: Int { changes.count }
    /// Number of field values carried (for progress and wire-cost figures).
    public var fieldCount: Int { changes.reduce(0) { $0 + max($1.fields.count, 1) } }
}
