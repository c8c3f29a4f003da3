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
    /// by chunk), without capturing them. A state row is a whole row: it is written with one
    /// prepared upsert per table, every column bound in schema order (a nullable column the
    /// row leaves out is null), so a row already there — a chunk received twice — becomes the
    /// same row again. Values are validated against the schema first. The capture triggers are
    /// dropped while the store fills (a staging store captures nothing) and put back by
    /// ``completeState(serverVersion:clientFile:)``.
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
            try Self.dropCaptureTriggers(db)
            var statements: [String: Statement] = [:]
            for (table, key, fields) in writes {
                let statement: Statement
                if let prepared = statements[table.name] {
                    statement = prepared
                } else {
                    statement = try db.cachedStatement(sql: StoreSQL.upsertWholeRow(table))
                    statements[table.name] = statement
                }
                var arguments: [(any DatabaseValueConvertible)?] = [key.databaseValue]
                arguments.reserveCapacity(table.valueColumns.count + 1)
                for column in table.valueColumns { arguments.append(fields[column.name]?.databaseValue ?? DatabaseValue.null) }
                try statement.execute(arguments: StatementArguments(arguments))
            }
        }
    }

    /// Drops the capture triggers (a staging store while it fills).
    static func dropCaptureTriggers(_ db: Database) throws {
        let names = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ?",
            arguments: [StoreSQL.triggerPrefix.count, StoreSQL.triggerPrefix])
        for name in names { try db.execute(sql: "DROP TRIGGER \(StoreSQL.quote(name))") }
    }

    /// Marks a staging store complete: the server version its rows represent and the identity
    /// the server assigned. Until this is written, the staging store is not used.
    public func completeState(serverVersion: ServerVersion, clientFile: ClientFileIdentity) async throws(StoreError) {
        let schema = self.schema
        try await write { db in
            _ = try self.installTriggers(db, schema: schema)
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
