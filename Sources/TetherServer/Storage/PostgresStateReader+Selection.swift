import Logging
import NIOCore
import PostgresNIO
import TetherProtocol

/// A read of selected rows (``StateSelection``), as SQLite's: table by table, every row of a
/// table in key order, or the candidates the filter index finds or the rows a change moves (their
/// keys collected when the table is reached, then read in batches).
extension PostgresStateReader {
    struct SelectionCursor {
        var tableIndex = 0
        var lastKey: ByteBuffer? = nil
        var candidates: [[UInt8]]? = nil
        var position = 0
    }

    static let keysPerRead = 1000

    /// The rows of a batch of sorted candidate keys (``keysPerRead``: a narrow range of the
    /// primary key). Right after a bulk load, before autovacuum has analysed `state`, the planner
    /// believes a partition's table holds a few dozen rows and scanned all of it for each batch's
    /// `key = ANY(…)` (a bitmap scan of the `(partition_id, tbl)` prefix, the keys a filter):
    /// 0.2 s a batch at a million rows, 30 s for a 10 % bootstrap. The batch's first and last key
    /// are index conditions of any plan, so the scan reads that range and no more.
    static func batchQuery(_ batch: [[UInt8]], partitionID: Int64, table: String) -> PostgresQuery {
        let (first, last) = (ByteBuffer(bytes: batch[0]), ByteBuffer(bytes: batch[batch.count - 1]))
        return """
            SELECT key, fields FROM state WHERE partition_id = \(partitionID) AND tbl = \(table)
            AND key >= \(first) AND key <= \(last) AND key = ANY(\(batch.map { ByteBuffer(bytes: $0) }))
            """
    }

    func select(_ selection: StateSelection) {
        self.selection = selection.ordered
    }

    func next(
        _ selection: [(table: String, rows: StateSelection.Table)], partitionID: Int64, maxRows: Int, maxBytes: Int
    ) async throws -> [StoredStateRow] {
        var rows: [StoredStateRow] = []
        var bytes = 0
        while selected.tableIndex < selection.count, rows.count < maxRows, bytes < maxBytes {
            let (table, chosen) = selection[selected.tableIndex]
            var read: [StoredStateRow] = []
            let tableDone: Bool
            let limit = maxRows - rows.count
            switch chosen {
            case .all:
                let found = try await connection.guardedQuery(
                    selected.lastKey.map {
                        "SELECT key, fields FROM state WHERE partition_id = \(partitionID) AND tbl = \(table) AND key > \($0) ORDER BY key LIMIT \(limit)"
                    } ?? "SELECT key, fields FROM state WHERE partition_id = \(partitionID) AND tbl = \(table) ORDER BY key LIMIT \(limit)",
                    logger: logger)
                var pageBytes = bytes
                for try await (key, fields) in found.decode((ByteBuffer, ByteBuffer).self) {
                    if pageBytes >= maxBytes { continue }  // drained: the rest is read again after the last one kept
                    read.append(StoredStateRow(table: table, key: key.bytes, fields: fields.bytes))
                    pageBytes += key.readableBytes + fields.readableBytes
                    selected.lastKey = key
                }
                tableDone = read.isEmpty
            case .candidates, .changed:
                if selected.candidates == nil {
                    selected.candidates = try await PostgresServerStorage.candidateKeys(chosen, partitionID: partitionID, table: table, connection, logger)
                }
                let keys = selected.candidates ?? []
                let batch = Array(keys[selected.position..<min(keys.count, selected.position + min(Self.keysPerRead, limit))])
                selected.position += batch.count
                // A batch whose rows are all gone reads nothing, and the next batch follows.
                tableDone = batch.isEmpty
                if !tableDone {
                    let found = try await connection.guardedQuery(Self.batchQuery(batch, partitionID: partitionID, table: table), logger: logger)
                    for try await (key, fields) in found.decode((ByteBuffer, ByteBuffer).self) {
                        read.append(StoredStateRow(table: table, key: key.bytes, fields: fields.bytes))
                    }
                }
            }
            if tableDone {
                selected = SelectionCursor(tableIndex: selected.tableIndex + 1)
                continue
            }
            rows += read
            bytes += read.reduce(0) { $0 + $1.key.count + $1.fields.count }
        }
        if rows.isEmpty { done = true }
        return rows
    }
}
