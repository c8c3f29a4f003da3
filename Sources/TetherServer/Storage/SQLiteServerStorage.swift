import Foundation
import GRDB
import TetherProtocol

/// ``ServerStorage`` in one SQLite database, `data_dir/server.sqlite` (WAL,
/// `synchronous=FULL`: a commit that returned survives a crash or `kill -9`), so that a
/// backup is a single SQLite online backup.
package final class SQLiteServerStorage: ServerStorage {
    package static let fileName = "server.sqlite"

    let pool: DatabasePool
    package let path: String

    /// Opens (creating when needed) the database in `directory`.
    package init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw StorageError.unavailable("cannot open \(path): \(error)")
        }
    }

    package func close() async throws {
        try pool.close()
    }

    package func backup(to path: String) async throws {
        let destination = try DatabaseQueue(path: path)
        try pool.backup(to: destination)
        try destination.close()
    }

    // MARK: Flags

    package func flags() async throws -> ServerFlags {
        try await pool.read { db in try Self.readFlags(db) }
    }

    package func setFlags(_ flags: ServerFlags) async throws {
        try await pool.write { db in try Self.write(flags, db) }
    }

    static func write(_ flags: ServerFlags, _ db: Database) throws {
        for (key, value) in flags.metaRows {
            try db.execute(
                sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        }
    }

    // MARK: Schemas

    package func schemaHistory() async throws -> [SchemaRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT schema, breaking, applied_at FROM schemas ORDER BY version").map { row in
                let bytes: Data = row["schema"]
                let schema: Schema
                do { schema = try Schema.decode([UInt8](bytes)) } catch { throw StorageError.corrupt("schemas") }
                return SchemaRecord(
                    schema: schema, isBreaking: row["breaking"] as Bool,
                    appliedAt: Date(timeIntervalSince1970: row["applied_at"]))
            }
        }
    }

    package func appendSchema(_ record: SchemaRecord, migration: StateMigration?) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO schemas(version, schema, breaking, applied_at) VALUES (?, ?, ?, ?)",
                arguments: [record.version, Data(record.schema.encoded), record.isBreaking, record.appliedAt.timeIntervalSince1970])
            if let migration {
                try Self.migrate(table: "state", owner: "partition_id", migration, db)
                try Self.migrate(table: "snapshot_state", owner: "snapshot_id", migration, db)
                try Self.reindexAll(db)
            }
        }
    }

    private static func migrate(table: String, owner: String, _ migration: StateMigration, _ db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT \(owner) AS owner, tbl, key, fields FROM \(table)")
        var updates: [(DatabaseValue, String, Data, Data?)] = []
        while let row = try rows.next() {
            let keyBytes: Data = row["key"]
            let fieldBytes: Data = row["fields"]
            let key: RowKey, fields: [String: FieldValue]
            do {
                key = try RowKey.decode([UInt8](keyBytes))
                fields = try FieldValue.decodeFields([UInt8](fieldBytes))
            } catch {
                throw StorageError.corrupt(table)
            }
            let migrated = migration.migrate(table: row["tbl"], key: key, fields: fields)
            updates.append((row["owner"], row["tbl"], keyBytes, migrated.map { Data(FieldValue.encodedFields($0)) }))
        }
        // `ownerValue`, not `owner`: the column name must stay the column name in the SQL.
        for (ownerValue, tbl, key, fields) in updates {
            if let fields {
                try db.execute(
                    sql: "UPDATE \(table) SET fields = ? WHERE \(owner) = ? AND tbl = ? AND key = ?",
                    arguments: [fields, ownerValue, tbl, key])
            } else {
                try db.execute(
                    sql: "DELETE FROM \(table) WHERE \(owner) = ? AND tbl = ? AND key = ?",
                    arguments: [ownerValue, tbl, key])
            }
        }
    }

    // MARK: Grants changed at run time

    package func runtimeGrants() async throws -> [RuntimeGrant] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT user, pattern, access FROM runtime_grants ORDER BY user, pattern").compactMap { row in
                guard case .success(let pattern) = GrantPattern.parse(row["pattern"]) else { return nil }
                let access: String? = row["access"]
                return RuntimeGrant(user: row["user"], pattern: pattern, access: access.flatMap(PartitionAccess.init(rawValue:)))
            }
        }
    }

    package func setRuntimeGrant(_ grant: RuntimeGrant) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO runtime_grants(user, pattern, access) VALUES (?, ?, ?)
                    ON CONFLICT(user, pattern) DO UPDATE SET access = excluded.access
                    """,
                arguments: [grant.user, grant.pattern.text, grant.access?.rawValue])
        }
    }
}
