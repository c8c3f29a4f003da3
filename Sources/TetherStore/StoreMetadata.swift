import Foundation
import GRDB
import TetherProtocol


package struct StoreMetadata: Sendable, Hashable {
    package var partition: String
    package var schemaVersion: Int
    package var clientFile: ClientFileIdentity?
    /// The last server version integrated into the store.
    package var serverVersion: ServerVersion
    /// The highest local `seq` the server has integrated (changes up to it are trimmed).
    package var integratedSeq: Int64
    package var isReadOnly: Bool
    /// Free-form marker for the client-reset machinery (e.g. a reset id); nil when unset.
    package var clientResetMarker: String?
    /// The subscriptions the store's rows are of (issue 51): nil for the whole partition.
    package var subscriptions: SubscriptionSet? = nil
    /// The server's token of the change that gave the rows (``SubscriptionChunk/scopeToken``;
    /// 0: the store took them with its state), with or without ``subscriptions`` (the server
    /// may impose subscriptions on a whole-partition store).
    package var subscriptionToken: UInt64 = 0
}

/// Reading and writing `_tether_meta` inside a database access.
enum MetaTable {
    static func exists(_ db: Database) throws -> Bool { try db.tableExists("_tether_meta") }

    static func fetch(_ db: Database) throws -> StoreMetadata? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM _tether_meta WHERE id = 1") else { return nil }
        let fileId: Int64? = row["client_file_id"]
        let fileSalt: Int64? = row["client_file_salt"]
        var metadata = StoreMetadata(
            partition: row["partition"],
            schemaVersion: row["schema_version"],
            clientFile: fileId.map { ClientFileIdentity(id: $0, salt: fileSalt ?? 0) },
            serverVersion: ServerVersion(version: row["server_version"], salt: row["server_version_salt"]),
            integratedSeq: row["integrated_seq"],
            isReadOnly: row["read_only"] == 1,
            clientResetMarker: row["client_reset_marker"])
        // A file the agent has not migrated yet (a backup read as a file) has no such column: nil.
        let subscriptions: Data? = row["subscriptions"]
        if let recorded = try subscriptions.map({ try decodeSubscriptions(Array($0), path: db.configuration.label ?? "store") }) {
            (metadata.subscriptions, metadata.subscriptionToken) = recorded
        } else {
            // Before tether-v5-scope-token (a backup read as a file): no column, 0.
            let token: Int64? = row["scope_token"]
            metadata.subscriptionToken = UInt64(bitPattern: token ?? 0)
        }
        return metadata
    }

    /// The recorded subscriptions from their canonical bytes (``SubscriptionSet/canonicalBytes``),
    /// then the scope token (8 bytes, big-endian; absent: 0).
    static func decodeSubscriptions(_ bytes: [UInt8], path: String) throws -> (SubscriptionSet, UInt64) {
        var reader = ByteReader(bytes)
        do {
            let set = try SubscriptionSet.decode(from: &reader)
            let token = reader.isAtEnd ? 0 : try reader.bigEndianUInt64("scope token")
            guard reader.isAtEnd else { throw WireDecodeError.malformed(field: "subscriptions", reason: "bytes after the set") }
            return (set, token)
        } catch {
            throw StoreError.schemaMismatch(
                path: path, table: "_tether_meta", column: "subscriptions", problem: "the recorded subscriptions cannot be read: \(error)")
        }
    }

    /// Records the subscriptions the store's rows are of (nil: the whole partition), with the
    /// token of the change that gave them (0: the state), kept for a nil set too.
    static func setSubscriptions(_ db: Database, _ set: SubscriptionSet?, token: UInt64 = 0) throws {
        let bytes = set.map { set -> Data in
            var w = ByteWriter()
            set.encode(into: &w)
            w.bigEndian(token)
            return Data(w.bytes)
        }
        try db.execute(
            sql: "UPDATE _tether_meta SET subscriptions = ?, scope_token = ? WHERE id = 1", arguments: [bytes, Int64(bitPattern: token)])
    }

    static func recordedSchema(_ db: Database, path: String) throws -> Schema {
        guard let json = try String.fetchOne(db, sql: "SELECT schema_json FROM _tether_meta WHERE id = 1") else {
            throw StoreError.notAStore(path: path)
        }
        do {
            return try JSONDecoder().decode(Schema.self, from: Data(json.utf8))
        } catch {
            throw StoreError.schemaMismatch(
                path: path, table: "_tether_meta", column: "schema_json", problem: "the recorded schema cannot be read")
        }
    }

    /// The schema as recorded in `_tether_meta` (sorted keys, so equal schemas are equal text).
    static func encode(_ schema: Schema) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(schema), as: UTF8.self)
    }

    static func insert(_ db: Database, partition: String, schema: Schema) throws {
        try db.execute(
            sql: "INSERT INTO _tether_meta (id, partition, schema_version, schema_json) VALUES (1, ?, ?, ?)",
            arguments: [partition, schema.version, try encode(schema)])
    }

    static func setSchema(_ db: Database, _ schema: Schema) throws {
        try db.execute(
            sql: "UPDATE _tether_meta SET schema_version = ?, schema_json = ? WHERE id = 1",
            arguments: [schema.version, try encode(schema)])
    }

    static func setServerVersion(_ db: Database, _ version: ServerVersion) throws {
        try db.execute(
            sql: "UPDATE _tether_meta SET server_version = ?, server_version_salt = ? WHERE id = 1",
            arguments: [version.version, version.salt])
    }

    /// Sets the store's identity; the uploads recorded under the previous one go with it.
    static func setClientFile(_ db: Database, _ identity: ClientFileIdentity?) throws {
        try db.execute(
            sql: "UPDATE _tether_meta SET client_file_id = ?, client_file_salt = ? WHERE id = 1",
            arguments: [identity?.id, identity?.salt])
        try UploadRecords.clear(db)
    }

    /// Raises the integrated seq (never lowers it); recorded uploads it covers are done with.
    static func raiseIntegratedSeq(_ db: Database, to seq: Int64) throws {
        try db.execute(
            sql: "UPDATE _tether_meta SET integrated_seq = max(integrated_seq, ?) WHERE id = 1", arguments: [seq])
        try UploadRecords.trim(db, through: seq)
    }

    static func setReadOnly(_ db: Database, _ readOnly: Bool) throws {
        try db.execute(sql: "UPDATE _tether_meta SET read_only = ? WHERE id = 1", arguments: [readOnly ? 1 : 0])
    }

    static func setClientResetMarker(_ db: Database, _ marker: String?) throws {
        try db.execute(sql: "UPDATE _tether_meta SET client_reset_marker = ? WHERE id = 1", arguments: [marker])
    }

    /// Runs `body` with the apply flag set, so the capture triggers ignore the agent's own
    /// writes. Must be called inside a write transaction: other connections never see the 1.
    static func withApplyFlag<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "UPDATE _tether_apply SET active = 1 WHERE id = 1")
        do {
            let result = try body()
            try db.execute(sql: "UPDATE _tether_apply SET active = 0 WHERE id = 1")
            return result
        } catch {
            // Cleanup: the transaction is rolled back anyway; clear the flag in case a caller
            // commits. The body's error is the one reported.
            try? db.execute(sql: "UPDATE _tether_apply SET active = 0 WHERE id = 1")
            throw error
        }
    }
}
