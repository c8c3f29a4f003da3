import Foundation
import GRDB
import TetherProtocol

/// A read of selected rows (``StateSelection``): table by table, every row of a table read in
/// key order, or the candidates the filter index finds or the rows a change moves (their keys
/// collected when the table is reached, then read in batches by key).
extension SQLiteStateReader {
    /// Where a selected read is. Only touched inside `snapshot.read`, which serialises accesses.
    final class SelectionCursor: @unchecked Sendable {
        var tableIndex = 0
        /// Of a table read whole: the last key returned.
        var lastKey: Data? = nil
        /// Of a table read by candidates: their keys, and how many were read.
        var candidates: [Data]? = nil
        var position = 0
    }

    /// Keys read per statement (SQLite binds at most 32,766 values in one).
    static let keysPerRead = 500

    func next(
        from snapshot: DatabaseSnapshot, selection: [(table: String, rows: StateSelection.Table)], partitionID: Int64, maxRows: Int,
        maxBytes: Int
    ) async throws -> [StoredStateRow] {
        let cursor = selected
        return try await snapshot.read { db in
            var rows: [StoredStateRow] = []
            var bytes = 0
            while cursor.tableIndex < selection.count, rows.count < maxRows, bytes < maxBytes {
                let (table, selected) = selection[cursor.tableIndex]
                let read: [StoredStateRow]
                let tableDone: Bool
                switch selected {
                case .all:
                    let statement = try db.cachedStatement(
                        sql: cursor.lastKey == nil
                            ? "SELECT tbl, key, fields FROM state WHERE partition_id = ? AND tbl = ? ORDER BY key LIMIT ?"
                            : "SELECT tbl, key, fields FROM state WHERE partition_id = ? AND tbl = ? AND key > ? ORDER BY key LIMIT ?")
                    let limit = maxRows - rows.count
                    let found = try Row.fetchCursor(
                        statement, arguments: cursor.lastKey.map { [partitionID, table, $0, limit] } ?? [partitionID, table, limit])
                    var page: [StoredStateRow] = []
                    var pageBytes = bytes
                    while pageBytes < maxBytes, let row = try found.next() {
                        let stored = Self.stored(row)
                        page.append(stored)
                        pageBytes += stored.key.count + stored.fields.count
                    }
                    read = page
                    tableDone = read.isEmpty
                    if let last = read.last { cursor.lastKey = Data(last.key) }
                case .candidates, .changed:
                    if cursor.candidates == nil {
                        cursor.candidates = try SQLiteServerStorage.candidateKeys(selected, partitionID: partitionID, table: table, db)
                    }
                    let keys = cursor.candidates ?? []
                    let batch = keys[cursor.position..<min(keys.count, cursor.position + min(Self.keysPerRead, maxRows - rows.count))]
                    cursor.position = batch.endIndex
                    // A batch whose rows are all gone reads nothing, and the next batch follows.
                    tableDone = batch.isEmpty
                    var page: [StoredStateRow] = []
                    if !tableDone {
                        // A cursor: each row read into a stored row, not copied into a GRDB row first.
                        let found = try Row.fetchCursor(
                            db.cachedStatement(
                                sql: "SELECT tbl, key, fields FROM state WHERE partition_id = ? AND tbl = ? AND key IN ("
                                    + Array(repeating: "?", count: batch.count).joined(separator: ", ") + ")"),
                            arguments: StatementArguments([partitionID, table] as [any DatabaseValueConvertible] + batch.map { $0 as any DatabaseValueConvertible }))
                        page.reserveCapacity(batch.count)
                        while let row = try found.next() { page.append(Self.stored(row)) }
                    }
                    read = page
                }
                if tableDone {
                    cursor.tableIndex += 1
                    cursor.lastKey = nil
                    cursor.candidates = nil
                    cursor.position = 0
                    continue
                }
                rows += read
                bytes += read.reduce(0) { $0 + $1.key.count + $1.fields.count }
            }
            return rows
        }
    }
}
