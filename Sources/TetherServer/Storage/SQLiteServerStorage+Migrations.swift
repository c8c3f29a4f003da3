import GRDB

extension SQLiteServerStorage {
    /// The database layout (docs/server.md, "Storage"). Each migration runs once, in order.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value INTEGER);
                CREATE TABLE partitions(
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    latest_version INTEGER NOT NULL, latest_salt INTEGER NOT NULL,
                    base_version INTEGER NOT NULL, base_salt INTEGER NOT NULL,
                    created_at REAL NOT NULL);
                CREATE TABLE client_files(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    partition_id INTEGER NOT NULL REFERENCES partitions(id),
                    salt INTEGER NOT NULL,
                    integrated_seq INTEGER NOT NULL DEFAULT 0,
                    integrated_version INTEGER NOT NULL DEFAULT 0,
                    created_at REAL NOT NULL,
                    last_seen REAL NOT NULL);
                CREATE INDEX client_files_partition ON client_files(partition_id);
                CREATE TABLE history(
                    id INTEGER PRIMARY KEY,
                    partition_id INTEGER NOT NULL REFERENCES partitions(id),
                    version INTEGER NOT NULL,
                    salt INTEGER NOT NULL,
                    origin_file INTEGER NOT NULL,
                    origin_seq INTEGER NOT NULL,
                    created_at REAL NOT NULL,
                    changeset BLOB NOT NULL,
                    UNIQUE(partition_id, version));
                CREATE INDEX history_origin ON history(partition_id, origin_file, version);
                CREATE TABLE state(
                    partition_id INTEGER NOT NULL,
                    tbl TEXT NOT NULL,
                    key BLOB NOT NULL,
                    fields BLOB NOT NULL,
                    PRIMARY KEY(partition_id, tbl, key)) WITHOUT ROWID;
                CREATE TABLE snapshots(
                    id TEXT PRIMARY KEY NOT NULL,
                    partition_id INTEGER NOT NULL REFERENCES partitions(id),
                    version INTEGER NOT NULL, salt INTEGER NOT NULL,
                    base_version INTEGER NOT NULL, base_salt INTEGER NOT NULL,
                    created_at REAL NOT NULL);
                CREATE TABLE snapshot_state(
                    snapshot_id TEXT NOT NULL,
                    tbl TEXT NOT NULL,
                    key BLOB NOT NULL,
                    fields BLOB NOT NULL,
                    PRIMARY KEY(snapshot_id, tbl, key)) WITHOUT ROWID;
                CREATE TABLE snapshot_client_files(
                    snapshot_id TEXT NOT NULL,
                    id INTEGER NOT NULL,
                    salt INTEGER NOT NULL,
                    integrated_seq INTEGER NOT NULL,
                    integrated_version INTEGER NOT NULL,
                    created_at REAL NOT NULL,
                    last_seen REAL NOT NULL,
                    PRIMARY KEY(snapshot_id, id));
                CREATE TABLE schemas(
                    version INTEGER PRIMARY KEY,
                    schema BLOB NOT NULL,
                    breaking INTEGER NOT NULL,
                    applied_at REAL NOT NULL);
                CREATE TABLE runtime_grants(
                    user TEXT NOT NULL,
                    pattern TEXT NOT NULL,
                    access TEXT,
                    PRIMARY KEY(user, pattern));
                """)
        }
        // Store lineage (protocol 3): the salt of the session whose upload was integrated last,
        // and the highest server version the store reported at a bind (docs/sync-model.md).
        migrator.registerMigration("v2: store lineage") { db in
            try db.execute(sql: """
                ALTER TABLE client_files ADD COLUMN integrated_salt INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE client_files ADD COLUMN confirmed_version INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE snapshot_client_files ADD COLUMN integrated_salt INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE snapshot_client_files ADD COLUMN confirmed_version INTEGER NOT NULL DEFAULT 0;
                """)
        }
        // Healing from the fleet (issue 34; docs/client-reset.md, "Healing a restored server"):
        // a partition's record, the lost versions' salts, the version each row was vouched for
        // when it is not the record's healed_to, the contributions and their unknown keys.
        migrator.registerMigration("v3: healing") { db in
            try db.execute(sql: """
                CREATE TABLE heals(
                    partition_id INTEGER PRIMARY KEY REFERENCES partitions(id),
                    mode TEXT NOT NULL, origin TEXT NOT NULL,
                    restored_to INTEGER NOT NULL, lost_until INTEGER NOT NULL, healed_to INTEGER NOT NULL,
                    devices INTEGER NOT NULL, healed_changes INTEGER NOT NULL, window_known INTEGER NOT NULL,
                    opened_at REAL NOT NULL, closed_at REAL);
                CREATE TABLE heal_window(
                    partition_id INTEGER NOT NULL, version INTEGER NOT NULL, salt INTEGER NOT NULL,
                    PRIMARY KEY(partition_id, version)) WITHOUT ROWID;
                CREATE TABLE heal_rows(
                    partition_id INTEGER NOT NULL, tbl TEXT NOT NULL, key BLOB NOT NULL, version INTEGER NOT NULL,
                    PRIMARY KEY(partition_id, tbl, key)) WITHOUT ROWID;
                CREATE INDEX heal_rows_version ON heal_rows(partition_id, version);
                CREATE TABLE heal_contributions(
                    partition_id INTEGER NOT NULL, id INTEGER NOT NULL, view_version INTEGER NOT NULL,
                    last_version INTEGER NOT NULL DEFAULT 0, healed_changes INTEGER NOT NULL DEFAULT 0,
                    completed INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY(partition_id, id)) WITHOUT ROWID;
                CREATE TABLE heal_unknown(
                    partition_id INTEGER NOT NULL, contribution INTEGER NOT NULL, tbl TEXT NOT NULL, key BLOB NOT NULL,
                    PRIMARY KEY(partition_id, contribution, tbl, key)) WITHOUT ROWID;
                """)
        }
        // The device ledger (issue 37; docs/server.md, "Device ledger"): each device's last
        // report for each partition.
        migrator.registerMigration("v4: device ledger") { db in
            try db.execute(sql: """
                CREATE TABLE device_reports(
                    device_id TEXT NOT NULL, partition TEXT NOT NULL,
                    device_name TEXT NOT NULL, user_name TEXT NOT NULL, release TEXT NOT NULL, state TEXT NOT NULL,
                    server_version INTEGER NOT NULL, client_file INTEGER NOT NULL, unsynced INTEGER NOT NULL,
                    unsynced_since REAL, last_upload_at REAL, last_error_code INTEGER, last_error_at REAL,
                    resets TEXT NOT NULL, pending_reset TEXT, reported_at REAL NOT NULL,
                    PRIMARY KEY(device_id, partition)) WITHOUT ROWID;
                CREATE INDEX device_reports_reported ON device_reports(reported_at);
                """)
        }
        // The ledger keyed by identity (issue 46; docs/server.md, "Device ledger"): an entry is
        // the user's, so one identity never writes another's; existing rows keep their user, and
        // states an agent does not have become `other`.
        migrator.registerMigration("v5: device ledger keyed by user") { db in
            try db.execute(sql: """
                CREATE TABLE device_reports_new(
                    user_name TEXT NOT NULL, device_id TEXT NOT NULL, partition TEXT NOT NULL,
                    device_name TEXT NOT NULL, release TEXT NOT NULL, state TEXT NOT NULL,
                    server_version INTEGER NOT NULL, client_file INTEGER NOT NULL, unsynced INTEGER NOT NULL,
                    unsynced_since REAL, last_upload_at REAL, last_error_code INTEGER, last_error_at REAL,
                    resets TEXT NOT NULL, pending_reset TEXT, reported_at REAL NOT NULL,
                    PRIMARY KEY(user_name, device_id, partition)) WITHOUT ROWID;
                INSERT INTO device_reports_new
                    SELECT user_name, device_id, partition, device_name, release,
                        CASE WHEN state IN (\(DeviceLedgerEntry.agentStatesSQL)) THEN state ELSE 'other' END,
                        server_version, client_file, unsynced, unsynced_since, last_upload_at, last_error_code, last_error_at,
                        resets, pending_reset, reported_at
                    FROM device_reports;
                DROP TABLE device_reports;
                ALTER TABLE device_reports_new RENAME TO device_reports;
                CREATE INDEX device_reports_reported ON device_reports(reported_at);
                """)
        }
        // Enrollment (issue 48; docs/server.md, "Enrollment"): enrolled devices, the keys that
        // admit them (secrets only as SHA-256 digests), and the audit trail of both.
        migrator.registerMigration("v6: identities") { db in
            try db.execute(sql: """
                CREATE TABLE devices(
                    id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL UNIQUE, tags TEXT NOT NULL,
                    credential_digest BLOB NOT NULL, pending_digests BLOB, rotation_requested_at REAL, credential_issued_at REAL NOT NULL,
                    created_at REAL NOT NULL, enrolled_with_key TEXT, last_seen_at REAL, revoked_at REAL);
                CREATE TABLE enrollment_keys(
                    id TEXT PRIMARY KEY NOT NULL, digest BLOB NOT NULL, tags TEXT NOT NULL,
                    uses_allowed INTEGER, uses_spent INTEGER NOT NULL DEFAULT 0, expires_at REAL, revoked_at REAL,
                    note TEXT NOT NULL, created_at REAL NOT NULL, created_by TEXT NOT NULL);
                CREATE TABLE audit_log(
                    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
                    subject TEXT NOT NULL, detail TEXT NOT NULL);
                """)
        }
        // The ledger at fleet scale (issue 49; docs/server.md, "Device ledger"): an index per
        // filter and order of a page (a WITHOUT ROWID table's index ends with its key, so each
        // order is total), and the report history, one row per entry and 10-minute bucket.
        migrator.registerMigration("v7: device ledger pages and history") { db in
            try db.execute(sql: """
                CREATE INDEX device_reports_name ON device_reports(device_name);
                CREATE INDEX device_reports_partition ON device_reports(partition, device_name);
                CREATE INDEX device_reports_state ON device_reports(state, device_name);
                CREATE INDEX device_reports_unsynced ON device_reports(unsynced);
                CREATE INDEX device_reports_device ON device_reports(device_id);
                CREATE TABLE device_history(
                    device_id TEXT NOT NULL, partition TEXT NOT NULL, user_name TEXT NOT NULL, bucket INTEGER NOT NULL,
                    max_unsynced INTEGER NOT NULL, last_upload_at REAL, state TEXT NOT NULL, reported_at REAL NOT NULL,
                    PRIMARY KEY(device_id, partition, user_name, bucket)) WITHOUT ROWID;
                CREATE INDEX device_history_bucket ON device_history(bucket);
                """)
        }
        // Remote actions (issue 49; docs/server.md, "Remote actions"): what operators asked
        // devices to do, until answered or expired, and what each device accepts.
        migrator.registerMigration("v8: remote actions") { db in
            try db.execute(sql: """
                CREATE TABLE device_actions(
                    id INTEGER PRIMARY KEY AUTOINCREMENT, user_name TEXT NOT NULL, device_id TEXT NOT NULL, device_name TEXT NOT NULL,
                    kind TEXT NOT NULL, partition TEXT, requested_by TEXT NOT NULL, requested_at REAL NOT NULL, expires_at REAL NOT NULL,
                    state TEXT NOT NULL CHECK(state IN (\(DeviceActionState.sqlList))), sent_at REAL, finished_at REAL,
                    message TEXT, report TEXT);
                CREATE INDEX device_actions_device ON device_actions(device_id, id);
                CREATE INDEX device_actions_pending ON device_actions(user_name, device_id) WHERE state IN ('queued', 'sent');
                CREATE INDEX device_actions_ended ON device_actions(finished_at) WHERE state NOT IN ('queued', 'sent');
                CREATE TABLE device_accepted_actions(
                    user_name TEXT NOT NULL, device_id TEXT NOT NULL, kinds TEXT NOT NULL, reported_at REAL NOT NULL,
                    PRIMARY KEY(user_name, device_id));
                """)
        }
        // The ledger's stored health class (issue 49; docs/server.md, "Device ledger"): the
        // `health` order as an index walk (``DeviceLedgerHealthColumn``).
        migrator.registerMigration("v9: device ledger health") { db in
            try db.execute(sql: DeviceLedgerHealthColumn.sqliteMigration)
        }
        // Every version a restore of this database lost, with its salt (issue 50, soak seed
        // 391972695): `heal_window` holds the current record's only, and a device that stayed
        // away through two restores came back with a version of the first one's window and
        // was taken for a database put back behind the server's back (``HealDetection``).
        migrator.registerMigration("v10: versions lost by every restore") { db in
            try db.execute(sql: """
                CREATE TABLE restored_away(
                    partition_id INTEGER NOT NULL, version INTEGER NOT NULL, salt INTEGER NOT NULL,
                    PRIMARY KEY(partition_id, version, salt)) WITHOUT ROWID;
                INSERT INTO restored_away(partition_id, version, salt) SELECT partition_id, version, salt FROM heal_window;
                """)
        }
        // Subscriptions (issue 51; docs/subscriptions.md): each history entry's row images, from
        // which a filtered session's downloads are cut, and an upload's compensating writes; the
        // scopes a client file's store was last given (``AppliedScopes``).
        migrator.registerMigration("v11: subscriptions") { db in
            try db.execute(sql: """
                ALTER TABLE history ADD COLUMN images BLOB;
                ALTER TABLE history ADD COLUMN compensations BLOB;
                CREATE TABLE client_file_scopes(client_file INTEGER PRIMARY KEY, scopes BLOB NOT NULL);
                """)
        }
        migrator.registerMigration("v12: filter index") { db in
            // Per indexed column (`[subscriptions] queryable`) of each state row, its value as
            // IndexedValue bytes: the rows a subscription's filter can match, found without
            // reading the partition.
            try db.execute(sql: """
                CREATE TABLE state_index(
                    partition_id INTEGER NOT NULL, tbl TEXT NOT NULL, col TEXT NOT NULL, value BLOB NOT NULL, key BLOB NOT NULL,
                    PRIMARY KEY (partition_id, tbl, col, value, key)) WITHOUT ROWID;
                CREATE TABLE state_index_columns(tbl TEXT NOT NULL, col TEXT NOT NULL, PRIMARY KEY (tbl, col)) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v13: forgotten client files") { db in
            // When each store whose identity `terminateSync` forgot last bound: a store that
            // bound after a heal record opened is on the history written since (HealDetection).
            try db.execute(sql: """
                CREATE TABLE forgotten_client_files(id INTEGER PRIMARY KEY, partition_id INTEGER NOT NULL, last_seen REAL NOT NULL);
                """)
        }
        return migrator
    }
}
