import Foundation
import GRDB
import TetherProtocol
#if canImport(Glibc)
import Glibc
#endif

extension PartitionStore {
    /// Removes the SQLite file at `path` with its `-wal`, `-shm` and `-journal` companions (a
    /// staging store once used, a half-written download); missing files are fine.
    package static func removeFiles(at path: String) {
        // Cleanup: one that stays is only litter; a path used again goes through removeFilesBeforeReuse.
        for suffix in NoFollow.companions { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// ``removeFiles(at:)`` before a new file takes the path (a download's staging store): a
    /// file that is there and cannot be removed is an error, not an old store to fill again or
    /// an old `-wal` for SQLite to replay into the new one. Missing files are fine.
    package static func removeFilesBeforeReuse(at path: String) throws(StoreError) {
        for suffix in NoFollow.companions {
            let file = path + suffix
            guard unlink(file) != 0 else { continue }
            let code = errno
            guard code == ENOENT else { throw StoreError.io(path: file, operation: "unlink", errno: code) }
        }
    }

    /// Writes rows of a server state into this store (a staging store a download fills chunk
    /// by chunk), without capturing them. A state row is a whole row: it is written with one
    /// prepared upsert per table, every column bound in schema order straight from the chunk's
    /// bytes (``ChangeRowsWriter``; a nullable column the row leaves out is null), so a row already
    /// there — a chunk received twice — becomes the same row again. Each row is checked against
    /// the schema before it is written; a row that does not fit fails the whole chunk. The
    /// capture triggers are dropped while the store fills (a staging store captures nothing) and
    /// put back by ``completeState(serverVersion:clientFile:)``.
    package func insertStateRows(_ rows: StateRows) async throws(StoreError) {
        try await insertStateRows(checkStateRows(rows))
    }

    /// `rows` checked against this store's schema (``ChangeRowsWriter/check(_:)``), before and
    /// apart from writing them: a caller reading the next chunk while this one is written (a
    /// server's ready-file build) checks it there, off the store's one writer.
    package func checkStateRows(_ rows: StateRows) throws(StoreError) -> CheckedStateRows {
        do { try SchemaFit.check(rows, in: schema) } catch { throw StoreError(error) }
        return CheckedStateRows(rows: rows, schemaVersion: schema.version)
    }

    /// Writes state rows ``checkStateRows(_:)`` passed, as ``insertStateRows(_:)-(StateRows)``.
    package func insertStateRows(_ checked: CheckedStateRows) async throws(StoreError) {
        let schema = self.schema
        precondition(checked.schemaVersion == schema.version, "state rows checked against another schema")
        try await write { db in
            try Self.dropCaptureTriggers(db)
            var writer = ChangeRowsWriter(db: db, schema: schema, inserts: .wholeRows)
            try writer.writeCheckedStateRows(checked.rows)
        }
    }

    /// Writes state rows given one by one (tests and tools): as ``insertStateRows(_:)-(StateRows)``.
    package func insertStateRows(_ rows: [StateRow]) async throws(StoreError) {
        try await insertStateRows(StateRows(Changeset(rows.map { .insert($0.table, $0.key, $0.fields) })))
    }

    /// Drops the capture triggers (a staging store while it fills).
    static func dropCaptureTriggers(_ db: Database) throws {
        let names = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ?",
            arguments: [StoreSQL.triggerPrefix.count, StoreSQL.triggerPrefix])
        for name in names { try db.execute(sql: "DROP TRIGGER \(StoreSQL.quote(name))") }
    }

    /// Marks a staging store complete: the server version its rows represent and the identity
    /// the server assigned. Until this is written, the staging store is not used. A server's
    /// ready file is completed without an identity (nil); the device that installs it sets its own.
    /// `subscriptions`: the set the state was taken with (nil: the whole partition, as a ready
    /// file always is), recorded with the rest.
    package func completeState(
        serverVersion: ServerVersion, clientFile: ClientFileIdentity?, subscriptions: SubscriptionSet? = nil
    ) async throws(StoreError) {
        let schema = self.schema
        try await write { db in
            _ = try self.installTriggers(db, schema: schema)
            try MetaTable.setServerVersion(db, serverVersion)
            try MetaTable.setClientFile(db, clientFile)
            try MetaTable.setSubscriptions(db, subscriptions)
        }
        // Everything into the database file itself, the WAL emptied: the file alone is the
        // complete store (``installWithoutCopy(staging:at:)`` links just that file).
        try await withPool { pool in
            try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
    }

    /// The rows of the schema's tables (a ready file's row count, for its name and progress).
    package func rowCount() async throws(StoreError) -> Int64 {
        let schema = self.schema
        return try await read { db in
            var total: Int64 = 0
            for table in schema.tables {
                total += try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(StoreSQL.quote(table.name))") ?? 0
            }
            return total
        }
    }
}
