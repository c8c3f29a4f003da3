import TetherProtocol

extension StoredStateRow {
    /// Rows per state chunk (and per write of a ready file built from rows).
    static let maxRowsPerChunk = 2048

    /// Stored state rows as sent, their bytes passed through; nullable columns a row lacks
    /// (added since it was written) are sent as null, so a state row carries every column.
    static func stateRows(_ stored: [StoredStateRow], _ schema: Schema) throws(StorageError) -> StateRows {
        var builder = StateRowsBuilder(schema: schema)
        for row in stored {
            do { try builder.append(table: row.table, key: row.key, fields: row.fields) } catch { throw .corrupt("state") }
        }
        return builder.build()
    }
}
