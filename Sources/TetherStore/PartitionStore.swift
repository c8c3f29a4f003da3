import Foundation
import GRDB
import Synchronization
import TetherProtocol

/// One partition's SQLite store (docs/contract.md: Partitions and stores): user tables created to the server's schema, change
/// capture by triggers (so writes from any process are captured), the change log, applying
/// server changes, and the primitives client resets are built from. See docs/store.md.
///
/// The agent accesses the file through a GRDB `DatabasePool` (WAL: its reads never block
/// applications, its writes are IMMEDIATE transactions that wait up to `busyTimeout` for an
/// application's write lock), closed while the store is idle and opened again on its next use
/// (``StoreConnections``). Applications use any SQLite binding at the same time.
package final class PartitionStore: Sendable {
    package let path: String
    package let partition: PartitionName
    /// Every access to the store's connections goes through it (PartitionStore+Memory).
    let connections: StoreConnections
    private let schemaState: Mutex<Schema>
    /// What opening found and what the running schema check last saw (PartitionStore+Health).
    let healthState = Mutex(StoreHealth())

    /// How long the agent's writes wait for an application's write lock.
    package static let busyTimeout: TimeInterval = 10
    /// The agent's own connections commit with `synchronous = NORMAL`: in WAL mode a power cut
    /// may lose their last commits but never corrupts the store, and everything they write —
    /// downloads applied with the server version they reach, change-log trims after the
    /// server's acknowledgement — is fetched or uploaded again from what survived. A reset's
    /// rewrite, which the reset record moves past once it commits, is made durable on its own
    /// (``writeAttaching(_:_:)``). Applications' connections keep their own setting (docs/store.md
    /// "Durability").
    static let synchronous = "NORMAL"

    /// The schema the store's tables follow now.
    package var schema: Schema { schemaState.withLock { $0 } }

    private init(path: String, partition: PartitionName, connections: StoreConnections, schema: Schema) {
        self.path = path
        self.partition = partition
        self.connections = connections
        self.schemaState = Mutex(schema)
    }

    /// Opens the store at `path`, creating it (WAL mode, tables, triggers, `_tether*` tables)
    /// when the file does not exist or holds no Tether tables yet.
    ///
    /// An existing store's user tables must match the schema recorded in it, or this throws
    /// `.schemaMismatch` naming the table and column (nothing is rewritten). When `schema`
    /// differs from the recorded one, a non-breaking difference (table or nullable column
    /// added) is applied in place; a breaking one throws `.breakingSchemaChange`.
    ///
    /// A file with user tables but no Tether tables is adopted when its tables match `schema`
    /// exactly; its existing rows are captured as inserts so that they get uploaded.
    ///
    /// With `tolerateAlteredTables`, an existing store whose user tables an application altered
    /// opens anyway (nothing is changed) and ``alteration`` names the difference: the agent
    /// then needs the store for the manual client reset that repairs it.
    ///
    /// A symbolic link at `path` (or at a `-wal`, `-shm`, `-journal` beside it) is refused
    /// with ``StoreError/symbolicLink(path:place:)`` naming `place`, never followed (``NoFollow``).
    package static func open(
        path: String, partition: PartitionName, schema: Schema, tolerateAlteredTables: Bool = false,
        place: StoreFilePlace = .store
    ) async throws(StoreError) -> PartitionStore {
        let problems = storeProblems(schema)
        guard problems.isEmpty else { throw .invalidSchema(problems: problems) }
        try NoFollow.refuseLinks(sqlite: path, place: place)
        let config = configuration(partition)
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: config)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        let connections = StoreConnections(path: path, configuration: config, pool: pool)
        let store = PartitionStore(path: path, partition: partition, connections: connections, schema: schema)
        do {
            // Refuse foreign files before the migrator adds anything to them.
            try await pool.read { db in
                if try !MetaTable.exists(db) {
                    try SchemaVerifier.verify(db, schema: schema, path: path, allowMissingTables: true)
                }
                // A store a later release converted is left as it is (its triggers and log are
                // not this release's).
                let migrator = InternalMigrations.migrator
                let unknown = try migrator.appliedIdentifiers(db).subtracting(migrator.migrations)
                if !unknown.isEmpty { throw StoreError.writtenByNewerRelease(path: path, migrations: unknown.sorted()) }
            }
            try InternalMigrations.migrator.migrate(pool)
            try await pool.write { db in
                try store.prepare(db, requested: schema, tolerateAlteredTables: tolerateAlteredTables)
            }
            let version = try await pool.read { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0 }
            store.healthState.withLock { $0.schemaVersion = version }
        } catch {
            try? pool.close()  // cleanup: the open's error is the one thrown
            throw StoreError.wrap(error, path: path)
        }
        return store
    }

    /// The agent's connections' configuration, at the first open and every open after an idle
    /// close (each connection sets its own `synchronous`).
    private static func configuration(_ partition: PartitionName) -> Configuration {
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        config.label = "tether.store.\(partition)"
        config.maximumReaderCount = 2
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        return config
    }

    /// `Schema.problems()` plus the names a store reserves besides `_tether*` and `sqlite_*`.
    static func storeProblems(_ schema: Schema) -> [String] {
        schema.problems() + schema.tables.filter { $0.name.lowercased() == "grdb_migrations" }.map {
            "tables.\($0.name): table name \($0.name.debugDescription) is reserved by the store (GRDB's migration table)"
        }
    }

    /// The schema recorded in the store at `path`, or nil when there is no Tether store there.
    package static func recordedSchema(path: String, place: StoreFilePlace = .store) throws(StoreError) -> Schema? {
        try NoFollow.refuseLinks(sqlite: path, place: place)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try readFile(at: path, place: place) { db in
            try MetaTable.exists(db) ? try MetaTable.recordedSchema(db, path: path) : nil
        }
    }

    /// The metadata of the store at `path`, read without opening it for writing (a staging
    /// copy, a backup), or nil when there is no Tether store there.
    package static func metadata(ofStoreAt path: String, place: StoreFilePlace = .store) throws(StoreError) -> StoreMetadata? {
        try NoFollow.refuseLinks(sqlite: path, place: place)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try readFile(at: path, place: place) { db in try MetaTable.exists(db) ? try MetaTable.fetch(db) : nil }
    }

    /// Closes the agent's connections. The store must not be used afterwards (accesses throw).
    package func close() throws(StoreError) {
        try connections.closeForGood()
    }

    // MARK: Database access

    /// One write transaction on the writer connection.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        try await withPool { pool in try await pool.write(body) }
    }

    /// One read transaction on a reader connection.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        try await withPool { pool in try await pool.read(body) }
    }

    /// Any other access to the pool (``StoreConnections/withPool(_:)``): the one way to it, so
    /// that it is opened if the store was closed while idle, and not closed under the access.
    func withPool<T: Sendable>(_ body: (DatabasePool) async throws -> T) async throws(StoreError) -> T {
        do {
            return try await connections.withPool(body)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    func setSchema(_ schema: Schema) { schemaState.withLock { $0 = schema } }

    // MARK: Metadata

    package func metadata() async throws(StoreError) -> StoreMetadata {
        let path = self.path
        return try await read { db in
            guard let meta = try MetaTable.fetch(db) else { throw StoreError.notAStore(path: path) }
            return meta
        }
    }

    /// Records the identity the server assigned to this store when it bound (nil clears it).
    package func setClientFile(_ identity: ClientFileIdentity?) async throws(StoreError) {
        try await write { db in try MetaTable.setClientFile(db, identity) }
    }

    /// Makes application writes fail (`partition <name> is read-only`) or allows them again.
    /// The agent's own applies are never blocked. The guard triggers come and go with the flag,
    /// in the same transaction.
    package func setReadOnly(_ readOnly: Bool) async throws(StoreError) {
        let schema = self.schema
        try await write { db in
            try MetaTable.setReadOnly(db, readOnly)
            try self.installTriggers(db, schema: schema)
        }
    }

    /// Sets or clears the client-reset marker kept in the store file.
    package func setClientResetMarker(_ marker: String?) async throws(StoreError) {
        try await write { db in try MetaTable.setClientResetMarker(db, marker) }
    }
}
