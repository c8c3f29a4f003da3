import Foundation
import GRDB
import Synchronization
import TetherProtocol

/// Reads one partition's state as of one version while uploads commit. A state that fits one
/// chunk (``StoredStateRow/maxRowsPerChunk`` rows, ``ProtocolLimits/targetBatchBytes``) is read
/// whole in the read transaction that finds its version; a larger one through a GRDB snapshot,
/// a read transaction held open on a connection of its own for the whole download. Opening that
/// connection parses the database's whole schema, which a new device's (usually empty or small)
/// state no longer pays for (issue 50: a bind storm's profile showed `sqlite3Parser` building
/// the schema of a new connection per bind).
final class SQLiteStateReader: StateReader {
    let version: ServerVersion
    let totalRows: Int64
    let totalBytes: Int64
    private let source: Source
    private let partitionID: Int64?
    private let cursor = Cursor()
    /// The tables (and of each, the rows) to read; nil: the whole partition in one key order.
    let selection: [(table: String, rows: StateSelection.Table)]?
    let selected = SelectionCursor()
    let exactTables: Set<String>

    private enum Source {
        /// Every row, read with the version; handed out in order.
        case read(Rows)
        case snapshot(DatabaseSnapshot)
    }

    private final class Rows: Sendable {
        let left: Mutex<ArraySlice<StoredStateRow>>
        init(_ rows: ArraySlice<StoredStateRow>) { left = Mutex(rows) }
    }

    /// The position after the last row returned.
    private final class Cursor: @unchecked Sendable {
        // Only touched inside `snapshot.read`, which serialises accesses.
        var table = ""
        var key = Data()
        var started = false
        var done = false
    }

    private init(
        version: ServerVersion, totalRows: Int64, totalBytes: Int64, source: Source, partitionID: Int64?,
        selection: [(table: String, rows: StateSelection.Table)]? = nil
    ) {
        self.selection = selection
        self.exactTables = StateSelection.exactTables(of: selection)
        self.version = version
        self.totalRows = totalRows
        self.totalBytes = totalBytes
        self.source = source
        self.partitionID = partitionID
    }

    /// A reader of the rows `purpose` reads (all of them: nil), found through the filter index
    /// where it serves the filters (``StateSelection``); the caller evaluates each row but those
    /// of ``exactTables``.
    static func open(pool: DatabasePool, partition: PartitionName, purpose: StateSelection.Purpose? = nil) async throws -> SQLiteStateReader {
        let small = try await pool.read { db -> SQLiteStateReader? in
            guard let p = try SQLiteServerStorage.partitionRow(partition, db) else {
                return SQLiteStateReader(version: .none, totalRows: 0, totalBytes: 0, source: .read(Rows([])), partitionID: nil)
            }
            let probe = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM state WHERE partition_id = ? LIMIT ?)"),
                arguments: [p.id, StoredStateRow.maxRowsPerChunk + 1]) ?? 0
            guard probe <= StoredStateRow.maxRowsPerChunk else { return nil }
            let (count, bytes) = try totals(p.id, db)
            guard bytes <= ProtocolLimits.targetBatchBytes else { return nil }
            let rows = try Row.fetchCursor(
                db.cachedStatement(sql: "SELECT tbl, key, fields FROM state WHERE partition_id = ? ORDER BY tbl, key"), arguments: [p.id])
            let tables = purpose.flatMap { StateSelection($0, indexed: [:]).tables }
            var all: [StoredStateRow] = []
            all.reserveCapacity(Int(count))
            while let row = try rows.next() {
                let stored = stored(row)
                if let tables, tables[stored.table] == nil { continue }
                all.append(stored)
            }
            return SQLiteStateReader(
                version: p.head.latest, totalRows: count, totalBytes: bytes, source: .read(Rows(all[...])), partitionID: p.id)
        }
        if let small { return small }
        let snapshot = try pool.makeSnapshot()
        let (p, rows, bytes, selection) = try await snapshot.read { db -> (StoredPartition?, Int64, Int64, [(table: String, rows: StateSelection.Table)]?) in
            guard let p = try SQLiteServerStorage.partitionRow(partition, db) else { return (nil, 0, 0, nil) }
            guard let purpose else {
                let (rows, bytes) = try totals(p.id, db)
                return (p, rows, bytes, nil)
            }
            let selection = StateSelection(purpose, indexed: try SQLiteServerStorage.filterIndexColumns(db).indexed).ordered
            // A change's read reports no progress; a filtered state counts the rows it selects
            // (what the device's disk must hold), not the partition's.
            if purpose.isChange { return (p, 0, 0, selection) }
            guard let selection else {
                let (rows, bytes) = try totals(p.id, db)
                return (p, rows, bytes, nil)
            }
            let (rows, bytes) = try SQLiteServerStorage.totals(of: selection, partitionID: p.id, db)
            return (p, rows, bytes, selection)
        }
        return SQLiteStateReader(
            version: p?.head.latest ?? .none, totalRows: rows, totalBytes: bytes, source: .snapshot(snapshot), partitionID: p?.id,
            selection: selection)
    }

    private static func totals(_ partitionID: Int64, _ db: Database) throws -> (rows: Int64, bytes: Int64) {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) AS n, coalesce(sum(length(key) + length(fields)), 0) AS b FROM state WHERE partition_id = ?"),
            arguments: [partitionID])
        return (row?["n"] ?? 0, row?["b"] ?? 0)
    }

    static func stored(_ row: Row) -> StoredStateRow {
        let keyBytes: Data = row[1]
        let fieldBytes: Data = row[2]
        return StoredStateRow(table: row[0], key: [UInt8](keyBytes), fields: [UInt8](fieldBytes))
    }

    func nextStored(maxRows: Int, maxBytes: Int) async throws -> [StoredStateRow] {
        guard let partitionID else { return [] }
        switch source {
        case .read(let rows):
            return rows.left.withLock { rows in
                var chunk: [StoredStateRow] = []
                var bytes = 0
                while chunk.count < maxRows, bytes < maxBytes, let row = rows.popFirst() {
                    chunk.append(row)
                    bytes += row.key.count + row.fields.count
                }
                return chunk
            }
        case .snapshot(let snapshot):
            if let selection {
                return try await next(from: snapshot, selection: selection, partitionID: partitionID, maxRows: maxRows, maxBytes: maxBytes)
            }
            return try await next(from: snapshot, partitionID: partitionID, maxRows: maxRows, maxBytes: maxBytes)
        }
    }

    private func next(from snapshot: DatabaseSnapshot, partitionID: Int64, maxRows: Int, maxBytes: Int) async throws -> [StoredStateRow] {
        let cursor = self.cursor
        return try await snapshot.read { db in
            guard !cursor.done else { return [] }
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: cursor.started
                        ? "SELECT tbl, key, fields FROM state WHERE partition_id = ? AND (tbl, key) > (?, ?) ORDER BY tbl, key LIMIT ?"
                        : "SELECT tbl, key, fields FROM state WHERE partition_id = ? ORDER BY tbl, key LIMIT ?"),
                arguments: cursor.started ? [partitionID, cursor.table, cursor.key, maxRows] : [partitionID, maxRows])
            var changes: [StoredStateRow] = []
            var bytes = 0
            while let row = try rows.next() {
                let change = Self.stored(row)
                changes.append(change)
                bytes += change.key.count + change.fields.count
                cursor.started = true
                cursor.table = change.table
                cursor.key = row[1]
                if bytes >= maxBytes { break }
            }
            if changes.isEmpty { cursor.done = true }
            return changes
        }
    }

    func close() async {
        if case .snapshot(let snapshot) = source {
            try? snapshot.close()  // read only: closing only releases the snapshot
        }
    }
}
