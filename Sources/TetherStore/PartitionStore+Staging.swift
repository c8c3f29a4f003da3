import Foundation
import GRDB
import TetherProtocol

extension PartitionStore {
    /// Removes the SQLite file at `path` with its `-wal`, `-shm` and `-journal` companions (a
    /// staging store once used, a half-written download); missing files are fine.
    public static func removeFiles(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Writes rows of a server state into this store (a staging store a download fills chunk
    /// by chunk), without capturing them. Each row is written as the insert of its fields
    /// (``RowChange/write(rowExists:)``): a row already there gets them again, so a chunk
    /// received twice does no harm. Values are validated against the schema first.
    public func insertStateRows(_ rows: [StateRow]) async throws(StoreError) {
        let schema = self.schema
        var validated: [(TableSchema, RowKey, [String: FieldValue])] = []
        validated.reserveCapacity(rows.count)
        for row in rows {
            let table = try ChangeValidator.table(row.table, in: schema)
            try ChangeValidator.checkKey(row.key, of: table)
            validated.append((table, row.key, try ChangeValidator.fields(row.fields, key: row.key, of: table, complete: true)))
        }
        let writes = validated
        try await write { db in
            try MetaTable.withApplyFlag(db) {
                for (table, key, fields) in writes {
                    switch RowChange.insert(table.name, key, fields).write(rowExists: try RowWriter.exists(db, table, key: key)) {
                    case .insert(let fields): try RowWriter.insert(db, table, key: key, fields: fields)
                    case .update(let fields): try RowWriter.update(db, table, key: key, fields: fields)
                    case .delete, .unchanged: break  // an insert neither deletes nor is ignored
                    }
                }
            }
        }
    }

    /// Marks a staging store complete: the server version its rows represent and the identity
    /// the server assigned. Until this is written, the staging store is not used.
    public func completeState(serverVersion: ServerVersion, clientFile: ClientFileIdentity) async throws(StoreError) {
        try await write { db in
            try MetaTable.setServerVersion(db, serverVersion)
            try MetaTable.setClientFile(db, clientFile)
        }
        // Everything into the database file itself, the WAL emptied: the file alone is the
        // complete store (``installWithoutCopy(staging:at:)`` links just that file).
        do {
            try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }
}
