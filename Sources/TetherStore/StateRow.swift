import TetherProtocol

/// One row of a full partition state: what a client reset rewrites the store to and what a
/// bootstrap stages. On the wire (`StateChunk`) and from the server's `StateReader` the same
/// rows travel as `insert` changes; here they are kept apart from ``RowChange`` on purpose,
/// because a state row is not a change and means more than an insert does:
///
/// - it is the whole row: a nullable column left out is null, so rewriting a store to a state
///   replaces a differing row, where an insert over an existing key merges only the fields it
///   carries (``RowChange/write(rowExists:)``);
/// - a state has only rows: no updates or deletes, and the rows it lacks are deleted from the
///   store it is written to;
/// - a ``StateSource`` yields them sorted by table, then strictly by key.
package struct StateRow: Sendable, Hashable {
    package var table: String
    package var key: RowKey
    /// Every value column (the primary key excluded); a nullable column may be left out (null).
    package var fields: [String: FieldValue]

    package init(table: String, key: RowKey, fields: [String: FieldValue]) {
        self.table = table
        self.key = key
        self.fields = fields
    }
}

/// State rows checked against a store's schema (``PartitionStore/checkStateRows(_:)``), to be
/// written by ``PartitionStore/insertStateRows(_:)-(CheckedStateRows)`` without checking them again.
package struct CheckedStateRows: Sendable {
    let rows: StateRows
    /// The version of the schema they were checked against.
    let schemaVersion: Int
}
