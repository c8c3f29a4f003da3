import Foundation
import GRDB
import TetherProtocol

/// Reads one partition's state through a GRDB snapshot: a read transaction held open for
/// the whole download, so every chunk comes from the same version while uploads commit.
final class SQLiteStateReader: StateReader {
    let version: ServerVersion
    let totalRows: Int64
    let totalBytes: Int64
    private let snapshot: DatabaseSnapshot
    private let partitionID: Int64?
    private let cursor = Cursor()

    /// The position after the last row returned.
    private final class Cursor: @unchecked Sendable {
        // Only touched inside `snapshot.read`, which serialises accesses.
        var table = ""
        var key = Data()
        var started = false
        var done = false
    }

    private init(version: ServerVersion, totalRows: Int64, totalBytes: Int64, snapshot: DatabaseSnapshot, partitionID: Int64?) {
        self.version = version
        self.totalRows = totalRows
        self.totalBytes = totalBytes
        self.snapshot = snapshot
        self.partitionID = partitionID
    }

    static func open(pool: DatabasePool, partition: PartitionName) async throws -> SQLiteStateReader {
        let snapshot = try pool.makeSnapshot()
        let (p, rows, bytes) = try await snapshot.read { db -> (StoredPartition?, Int64, Int64) in
            guard let p = try SQLiteServerStorage.partitionRow(partition, db) else { return (nil, 0, 0) }
            let row = try Row.fetchOne(
                db, sql: "SELECT count(*) AS n, coalesce(sum(length(key) + length(fields)), 0) AS b FROM state WHERE partition_id = ?",
                arguments: [p.id])
            return (p, row?["n"] ?? 0, row?["b"] ?? 0)
        }
        return SQLiteStateReader(
            version: p?.head.latest ?? .none, totalRows: rows, totalBytes: bytes, snapshot: snapshot, partitionID: p?.id)
    }

    func nextStored(maxRows: Int, maxBytes: Int) async throws -> [StoredStateRow] {
        guard let partitionID else { return [] }
        let cursor = self.cursor
        return try await snapshot.read { db in
            guard !cursor.done else { return [] }
            let rows = try Row.fetchCursor(
                db,
                sql: cursor.started
                    ? "SELECT tbl, key, fields FROM state WHERE partition_id = ? AND (tbl, key) > (?, ?) ORDER BY tbl, key LIMIT ?"
                    : "SELECT tbl, key, fields FROM state WHERE partition_id = ? ORDER BY tbl, key LIMIT ?",
                arguments: cursor.started ? [partitionID, cursor.table, cursor.key, maxRows] : [partitionID, maxRows])
            var changes: [StoredStateRow] = []
            var bytes = 0
            while let row = try rows.next() {
                let table: String = row[0]
                let keyBytes: Data = row[1]
                let fieldBytes: Data = row[2]
                changes.append(StoredStateRow(table: table, key: [UInt8](keyBytes), fields: [UInt8](fieldBytes)))
                bytes += keyBytes.count + fieldBytes.count
                cursor.started = true
                cursor.table = table
                cursor.key = keyBytes
                if bytes >= maxBytes { break }
            }
            if changes.isEmpty { cursor.done = true }
            return changes
        }
    }

    func close() async {
        try? snapshot.close()  // read only: closing only releases the snapshot
    }
}
