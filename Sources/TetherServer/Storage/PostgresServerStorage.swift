import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import Synchronization
import TetherProtocol

/// ``ServerStorage`` in a PostgreSQL database that any number of `tether-server` instances
/// share (`[storage] kind = "postgresql"`, docs/server.md "PostgreSQL").
///
/// The same tables and the same semantics as ``SQLiteServerStorage``; what differs is how
/// concurrent instances are kept apart: every change to a partition takes the lock on the
/// partition's row first (so versions are assigned one after the other, in commit order, never
/// from a sequence), migrations and compaction run under advisory locks, and downloads of a
/// partition's state read from one `REPEATABLE READ` snapshot on a connection of their own.
///
/// The connection pool (`PostgresClient`) does its work in ``run()``: run it as a Service (or in
/// a task) before calling anything else. Every method that returns has committed.
package final class PostgresServerStorage: ServerStorage, Service {
    let client: PostgresClient
    let connectionConfiguration: PostgresConnection.Configuration
    /// Bounds the state downloads in progress (each holds a connection of its own).
    let downloadSlots: DownloadSlots
    /// Download connections between downloads, for the next one.
    let idleDownloadConnections: IdleDownloadConnections
    package let location: PostgresLocation
    let logger: Logger

    /// - Parameters:
    ///   - maximumConnections: the pool's size (each instance opens at most this many, plus
    ///     one per state download — in progress, or kept for the next — and one for
    ///     notifications).
    ///   - maximumStateDownloads: state downloads read at once; more wait for a slot
    ///     (`[storage] max_state_downloads`).
    package init(
        location: PostgresLocation, password: Secret?, maximumConnections: Int = 16,
        maximumStateDownloads: Int = StorageConfiguration.defaultMaxStateDownloads, logger: Logger
    ) throws {
        self.location = location
        self.downloadSlots = DownloadSlots(limit: maximumStateDownloads)
        self.idleDownloadConnections = IdleDownloadConnections(limit: maximumStateDownloads)
        self.logger = logger
        let clientTLS: PostgresClient.Configuration.TLS
        let connectionTLS: PostgresConnection.Configuration.TLS
        switch location.tls {
        case .disable:
            clientTLS = .disable
            connectionTLS = .disable
        case .prefer:
            clientTLS = .prefer(.makeClientConfiguration())
            connectionTLS = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require:
            clientTLS = .require(.makeClientConfiguration())
            connectionTLS = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: password?.value,
            database: location.database, tls: clientTLS)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        // A pooled connection's transactions are short and never wait for a client: one left
        // idle this long belongs to an instance that is stalled (frozen, swapped out) while it
        // holds partition locks. PostgreSQL ends it, the locks go, and an admin command or an
        // upload on another instance goes on; the stalled instance's upload fails and is sent
        // again. State downloads hold a connection of their own and are not concerned.
        configuration.options.additionalStartupParameters = [
            ("idle_in_transaction_session_timeout", "\(Self.stalledTransactionLimit.components.seconds)s")
        ]
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        connectionConfiguration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: password?.value,
            database: location.database, tls: connectionTLS)
    }

    /// Runs the connection pool until the task is cancelled or a graceful shutdown, then closes
    /// the download connections kept between downloads.
    package func run() async {
        await client.run()
        await idleDownloadConnections.closeAll()
    }

    /// The pool closes when ``run()`` ends; nothing to do here.
    package func close() async throws {}

    /// Connects once and asks the server for its version (`tether-server --check-config`).
    package static func check(_ location: PostgresLocation, password: Secret?, logger: Logger) async throws -> String {
        let storage = try PostgresServerStorage(location: location, password: password, maximumConnections: 1, logger: logger)
        let connection = try await storage.connect()
        do {
            let version = try await storage.withStorageErrors {
                let rows = try await connection.guardedQuery("SELECT version()", logger: logger)
                for try await version in rows.decode(String.self) { return version }
                return "unknown version"
            }
            try? await connection.close()  // the version is read: a failed close loses nothing
            return version
        } catch {
            try? await connection.close()  // cleanup: the query's error is the one reported
            throw error
        }
    }

    /// `pg_dump` is the backup of a PostgreSQL deployment; `admin backup` cannot copy it.
    package func backup(to path: String) async throws {
        throw StorageError.unavailable(
            "admin backup copies SQLite storage only; back up PostgreSQL with pg_dump or base backups (docs/server.md)")
    }

    // MARK: Flags

    package func flags() async throws -> ServerFlags {
        try await withStorageErrors {
            try await client.withConnection { connection in try await Self.readFlags(connection, logger) }
        }
    }

    static func readFlags(_ connection: PostgresConnection, _ logger: Logger) async throws -> ServerFlags {
        var values: [String: Int64?] = [:]
        for try await row in try await connection.guardedExecute(PostgresHotSQL.Flags.self, logger: logger) {
            let (key, value) = try row.decode((String, Int64?).self)
            values[key] = value
        }
        return ServerFlags(meta: values)
    }

    package func setFlags(_ flags: ServerFlags) async throws {
        try await transaction { connection in try await Self.write(flags, connection, self.logger) }
    }

    static func write(_ flags: ServerFlags, _ connection: PostgresConnection, _ logger: Logger) async throws {
        for (key, value) in flags.metaRows {
            try await connection.guardedQuery(
                "INSERT INTO meta(key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                logger: logger)
        }
    }

    // MARK: Schemas

    package func schemaHistory() async throws -> [SchemaRecord] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var records: [SchemaRecord] = []
                let rows = try await connection.guardedQuery("SELECT schema, breaking, applied_at FROM schemas ORDER BY version", logger: logger)
                for try await (bytes, breaking, appliedAt) in rows.decode((ByteBuffer, Bool, Double).self) {
                    let schema: Schema
                    do { schema = try Schema.decode(bytes.bytes) } catch { throw StorageError.corrupt("schemas") }
                    records.append(SchemaRecord(schema: schema, isBreaking: breaking, appliedAt: Date(timeIntervalSince1970: appliedAt)))
                }
                return records
            }
        }
    }

    package func appendSchema(_ record: SchemaRecord, migration: StateMigration?) async throws {
        try await transaction { connection in
            let encoded = ByteBuffer(bytes: record.schema.encoded)
            try await connection.guardedQuery(
                """
                INSERT INTO schemas(version, schema, breaking, applied_at)
                VALUES (\(record.version), \(encoded), \(record.isBreaking), \(record.appliedAt.timeIntervalSince1970))
                """, logger: self.logger)
            if let migration {
                // Every state row is rewritten: no partition may integrate meanwhile.
                try await connection.guardedQuery("SELECT id FROM partitions ORDER BY id FOR UPDATE", logger: self.logger)
                try await self.migrate(table: "state", owner: "partition_id", migration, connection)
                try await self.migrate(table: "snapshot_state", owner: "snapshot_id", migration, connection)
                try await Self.reindexAll(connection, self.logger)
            }
        }
    }

    private func migrate(table: String, owner: String, _ migration: StateMigration, _ connection: PostgresConnection) async throws {
        var owners: [String] = [], tables: [String] = [], keys: [ByteBuffer] = [], fields: [ByteBuffer?] = []
        let rows = try await connection.guardedQuery(
            PostgresQuery(unsafeSQL: "SELECT \(owner)::text, tbl, key, fields FROM \(table)"), logger: logger)
        for try await (ownerValue, tbl, keyBytes, fieldBytes) in rows.decode((String, String, ByteBuffer, ByteBuffer).self) {
            let key: RowKey, decoded: [String: FieldValue]
            do {
                key = try RowKey.decode(keyBytes.bytes)
                decoded = try FieldValue.decodeFields(fieldBytes.bytes)
            } catch {
                throw StorageError.corrupt(table)
            }
            owners.append(ownerValue)
            tables.append(tbl)
            keys.append(keyBytes)
            fields.append(migration.migrate(table: tbl, key: key, fields: decoded).map { ByteBuffer(bytes: FieldValue.encodedFields($0)) })
        }
        let ownerType = owner == "partition_id" ? "bigint" : "text"
        let updated = fields.indices.filter { fields[$0] != nil }
        let deleted = fields.indices.filter { fields[$0] == nil }
        if !updated.isEmpty {
            var binds = PostgresBindings()
            binds.append(updated.map { owners[$0] })
            binds.append(updated.map { tables[$0] })
            binds.append(updated.map { keys[$0] })
            binds.append(updated.map { fields[$0]! })
            try await connection.guardedQuery(PostgresQuery(unsafeSQL: """
                UPDATE \(table) t SET fields = u.fields
                FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bytea[]) AS u(owner, tbl, key, fields)
                WHERE t.\(owner) = u.owner::\(ownerType) AND t.tbl = u.tbl AND t.key = u.key
                """, binds: binds), logger: logger)
        }
        if !deleted.isEmpty {
            var binds = PostgresBindings()
            binds.append(deleted.map { owners[$0] })
            binds.append(deleted.map { tables[$0] })
            binds.append(deleted.map { keys[$0] })
            try await connection.guardedQuery(PostgresQuery(unsafeSQL: """
                DELETE FROM \(table) t USING unnest($1::text[], $2::text[], $3::bytea[]) AS u(owner, tbl, key)
                WHERE t.\(owner) = u.owner::\(ownerType) AND t.tbl = u.tbl AND t.key = u.key
                """, binds: binds), logger: logger)
        }
    }

    // MARK: Grants changed at run time

    package func runtimeGrants() async throws -> [RuntimeGrant] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var grants: [RuntimeGrant] = []
                let rows = try await connection.guardedQuery(
                    "SELECT user_name, pattern, access FROM runtime_grants ORDER BY user_name, pattern", logger: logger)
                for try await (user, text, access) in rows.decode((String, String, String?).self) {
                    guard case .success(let pattern) = GrantPattern.parse(text) else { continue }
                    grants.append(RuntimeGrant(user: user, pattern: pattern, access: access.flatMap(PartitionAccess.init(rawValue:))))
                }
                return grants
            }
        }
    }

    package func setRuntimeGrant(_ grant: RuntimeGrant) async throws {
        try await transaction { connection in
            try await connection.guardedQuery(
                """
                INSERT INTO runtime_grants(user_name, pattern, access) VALUES (\(grant.user), \(grant.pattern.text), \(grant.access?.rawValue))
                ON CONFLICT (user_name, pattern) DO UPDATE SET access = excluded.access
                """, logger: self.logger)
        }
    }

    // MARK: Connections and errors

    /// How long a pooled connection may sit idle inside a transaction before PostgreSQL ends it.
    static let stalledTransactionLimit = Duration.seconds(15)

    /// A connection outside the pool (state downloads hold one for their whole length).
    func connect() async throws -> PostgresConnection {
        try await withStorageErrors {
            try await PostgresConnection.connect(configuration: connectionConfiguration, id: Self.nextConnectionID(), logger: logger)
        }
    }

    private static let connectionIDs = ConnectionIDSource()

    static func nextConnectionID() -> Int { connectionIDs.next() }

    @discardableResult
    /// Runs `body` in a transaction on a pooled connection; errors become ``StorageError``.
    func transaction<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await connection.guardedQuery("BEGIN", logger: logger)
                do {
                    let result = try await body(connection)
                    try await connection.guardedQuery("COMMIT", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.guardedQuery("ROLLBACK", logger: logger)  // the body's error is the answer
                    throw error
                }
            }
        }
    }

    @discardableResult
    func withStorageErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as StorageError {
            throw error
        } catch let error as DeviceActionError {
            throw error
        } catch let error as PSQLError {
            throw StorageError.unavailable(Self.describe(error))
        } catch {
            throw StorageError.unavailable("\(error)")
        }
    }

    /// ``describe(_:)`` for any error (PostgresNIO's own description hides everything).
    static func describe(any error: any Error) -> String {
        if let error = error as? PSQLError { return describe(error) }
        return "\(error)"
    }

    /// What went wrong, from the server's message when there is one (never a password: none is in a query).
    static func describe(_ error: PSQLError) -> String {
        if let message = error.serverInfo?[.message] {
            let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return "PostgreSQL: \(message)\(state)"
        }
        if let underlying = error.underlying { return "PostgreSQL connection: \(error.code): \(underlying)" }
        return "PostgreSQL connection: \(error.code)"
    }
}

extension ByteBuffer {
    /// The readable bytes as an array (decoding helpers take arrays).
    var bytes: [UInt8] { Array(readableBytesView) }
}

/// Ids for connections opened outside the pool (only for PostgresNIO's log metadata).
final class ConnectionIDSource: Sendable {
    private let counter = Mutex(1_000_000)

    func next() -> Int {
        counter.withLock { value in
            value += 1
            return value
        }
    }
}
