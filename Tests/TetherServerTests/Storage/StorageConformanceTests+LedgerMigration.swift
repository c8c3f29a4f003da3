import Foundation
import GRDB
import PostgresNIO
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The ledger's key change (issue 46: SQLite `v5`, PostgreSQL `6`) on a database holding rows of
/// the old layout: every row keeps its user, a state an agent does not have becomes `other`,
/// and the same device id under another user is another entry from then on.
extension StorageConformanceTests {
    static let oldLedgerRows = """
        INSERT INTO device_reports(
            device_id, partition, device_name, user_name, release, state, server_version, client_file, unsynced, resets, reported_at)
        VALUES ('d1', 'p', 'till 1', 'alice', '0.1.0', 'synced', 3, 7, 0, '{}', 1700000000),
               ('d2', 'p', 'till 2', 'bob', '0.1.0', 'evil-state', 0, 0, 0, '{}', 1700000001)
        """

    @Test(arguments: StorageBackend.allCases)
    func theLedgerMigrationKeepsEachRowsUserAndMapsUnknownStates(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            // Back to the layout before the migration, with rows in it.
            if let sqlite = storage as? SQLiteServerStorage {
                try await sqlite.pool.write { db in
                    try db.execute(sql: """
                        DROP TABLE device_reports;
                        CREATE TABLE device_reports(
                            device_id TEXT NOT NULL, partition TEXT NOT NULL,
                            device_name TEXT NOT NULL, user_name TEXT NOT NULL, release TEXT NOT NULL, state TEXT NOT NULL,
                            server_version INTEGER NOT NULL, client_file INTEGER NOT NULL, unsynced INTEGER NOT NULL,
                            unsynced_since REAL, last_upload_at REAL, last_error_code INTEGER, last_error_at REAL,
                            resets TEXT NOT NULL, pending_reset TEXT, reported_at REAL NOT NULL,
                            PRIMARY KEY(device_id, partition)) WITHOUT ROWID;
                        CREATE INDEX device_reports_reported ON device_reports(reported_at);
                        DELETE FROM grdb_migrations WHERE identifier = 'v5: device ledger keyed by user';
                        """)
                    try db.execute(sql: Self.oldLedgerRows)
                }
                try SQLiteServerStorage.migrator.migrate(sqlite.pool)
            } else if let postgres = storage as? PostgresServerStorage {
                try await postgres.transaction { connection in
                    for statement in [
                        "ALTER TABLE device_reports DROP CONSTRAINT device_reports_pkey",
                        "ALTER TABLE device_reports ADD PRIMARY KEY(device_id, partition)",
                        "DELETE FROM tether_migrations WHERE version = 6",
                        Self.oldLedgerRows,
                    ] {
                        try await connection.guardedQuery(PostgresQuery(unsafeSQL: statement), logger: postgres.logger)
                    }
                }
                #expect(try await postgres.migrate() == [6])
            } else {
                Issue.record("unknown storage \(type(of: storage))")
            }
            let rows = try await storage.devices(DeviceQuery())
            #expect(rows.map { "\($0.user) \($0.deviceID) \($0.state) \($0.serverVersion) \($0.clientFile)" } == [
                "bob d2 other 0 0", "alice d1 synced 3 7",
            ])
            // The key is the user's now: bob's report for d1 is an entry of its own.
            try await storage.recordDeviceReports([Self.entry("d1", "p", user: "bob", at: now)])
            #expect(try await storage.devices(DeviceQuery(partition: "p")).filter { $0.deviceID == "d1" }.map(\.user).sorted() == ["alice", "bob"])
        }
    }
}
