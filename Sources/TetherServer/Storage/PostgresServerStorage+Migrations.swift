import Logging
import PostgresNIO

extension PostgresServerStorage {
    /// The database layout (docs/server.md, "Storage"): the SQLite layout's tables with
    /// PostgreSQL types, `tbl` in the "C" collation so state downloads list rows in the same
    /// byte order, and `runtime_grants.user_name` (`user` is reserved). Each migration runs once,
    /// in order, in one transaction under an advisory lock, so instances starting together
    /// migrate once.
    static let migrations: [(version: Int, statements: [String])] = [
        (1, [
            "CREATE TABLE meta(key text PRIMARY KEY, value bigint)",
            """
            CREATE TABLE partitions(
                id bigserial PRIMARY KEY,
                name text NOT NULL UNIQUE,
                latest_version bigint NOT NULL, latest_salt bigint NOT NULL,
                base_version bigint NOT NULL, base_salt bigint NOT NULL,
                epoch bigint NOT NULL DEFAULT 0,
                created_at double precision NOT NULL)
            """,
            """
            CREATE TABLE client_files(
                id bigserial PRIMARY KEY,
                partition_id bigint NOT NULL REFERENCES partitions(id),
                salt bigint NOT NULL,
                integrated_seq bigint NOT NULL DEFAULT 0,
                integrated_version bigint NOT NULL DEFAULT 0,
                created_at double precision NOT NULL,
                last_seen double precision NOT NULL)
            """,
            "CREATE INDEX client_files_partition ON client_files(partition_id)",
            """
            CREATE TABLE history(
                partition_id bigint NOT NULL REFERENCES partitions(id),
                version bigint NOT NULL,
                salt bigint NOT NULL,
                origin_file bigint NOT NULL,
                origin_seq bigint NOT NULL,
                created_at double precision NOT NULL,
                changeset bytea NOT NULL,
                PRIMARY KEY(partition_id, version))
            """,
            "CREATE INDEX history_origin ON history(partition_id, origin_file, version)",
            "CREATE INDEX history_created ON history(partition_id, created_at)",
            """
            CREATE TABLE state(
                partition_id bigint NOT NULL,
                tbl text COLLATE "C" NOT NULL,
                key bytea NOT NULL,
                fields bytea NOT NULL,
                PRIMARY KEY(partition_id, tbl, key))
            """,
            """
            CREATE TABLE snapshots(
                id text PRIMARY KEY,
                partition_id bigint NOT NULL REFERENCES partitions(id),
                version bigint NOT NULL, salt bigint NOT NULL,
                base_version bigint NOT NULL, base_salt bigint NOT NULL,
                created_at double precision NOT NULL)
            """,
            """
            CREATE TABLE snapshot_state(
                snapshot_id text NOT NULL,
                tbl text COLLATE "C" NOT NULL,
                key bytea NOT NULL,
                fields bytea NOT NULL,
                PRIMARY KEY(snapshot_id, tbl, key))
            """,
            """
            CREATE TABLE snapshot_client_files(
                snapshot_id text NOT NULL,
                id bigint NOT NULL,
                salt bigint NOT NULL,
                integrated_seq bigint NOT NULL,
                integrated_version bigint NOT NULL,
                created_at double precision NOT NULL,
                last_seen double precision NOT NULL,
                PRIMARY KEY(snapshot_id, id))
            """,
            """
            CREATE TABLE schemas(
                version integer PRIMARY KEY,
                schema bytea NOT NULL,
                breaking boolean NOT NULL,
                applied_at double precision NOT NULL)
            """,
            """
            CREATE TABLE runtime_grants(
                user_name text NOT NULL,
                pattern text NOT NULL,
                access text,
                PRIMARY KEY(user_name, pattern))
            """,
        ]),
        // Which instance's session holds a client file (error 108 across instances). A lease is
        // alive while its holder's advisory lock (held on its LISTEN connection) is.
        (2, [
            """
            CREATE TABLE client_file_leases(
                client_file bigint PRIMARY KEY,
                instance text NOT NULL,
                holder_key integer NOT NULL,
                taken_at timestamptz NOT NULL DEFAULT now())
            """,
        ]),
        // Store lineage (protocol 3): the salt of the session whose upload was integrated last,
        // and the highest server version the store reported at a bind (docs/sync-model.md).
        (3, [
            "ALTER TABLE client_files ADD COLUMN integrated_salt bigint NOT NULL DEFAULT 0",
            "ALTER TABLE client_files ADD COLUMN confirmed_version bigint NOT NULL DEFAULT 0",
            "ALTER TABLE snapshot_client_files ADD COLUMN integrated_salt bigint NOT NULL DEFAULT 0",
            "ALTER TABLE snapshot_client_files ADD COLUMN confirmed_version bigint NOT NULL DEFAULT 0",
        ]),
        // Healing from the fleet (issue 34; docs/client-reset.md, "Healing a restored server"):
        // a partition's record, the lost versions' salts, the version each row was vouched for
        // when it is not the record's healed_to, the contributions and their unknown keys.
        (4, [
            """
            CREATE TABLE heals(
                partition_id bigint PRIMARY KEY REFERENCES partitions(id),
                mode text NOT NULL, origin text NOT NULL,
                restored_to bigint NOT NULL, lost_until bigint NOT NULL, healed_to bigint NOT NULL,
                devices bigint NOT NULL, healed_changes bigint NOT NULL, window_known boolean NOT NULL,
                opened_at double precision NOT NULL, closed_at double precision)
            """,
            """
            CREATE TABLE heal_window(
                partition_id bigint NOT NULL, version bigint NOT NULL, salt bigint NOT NULL,
                PRIMARY KEY(partition_id, version))
            """,
            """
            CREATE TABLE heal_rows(
                partition_id bigint NOT NULL, tbl text COLLATE "C" NOT NULL, key bytea NOT NULL, version bigint NOT NULL,
                PRIMARY KEY(partition_id, tbl, key))
            """,
            "CREATE INDEX heal_rows_version ON heal_rows(partition_id, version)",
            """
            CREATE TABLE heal_contributions(
                partition_id bigint NOT NULL, id bigint NOT NULL, view_version bigint NOT NULL,
                last_version bigint NOT NULL DEFAULT 0, healed_changes bigint NOT NULL DEFAULT 0,
                completed boolean NOT NULL DEFAULT false,
                PRIMARY KEY(partition_id, id))
            """,
            """
            CREATE TABLE heal_unknown(
                partition_id bigint NOT NULL, contribution bigint NOT NULL, tbl text COLLATE "C" NOT NULL, key bytea NOT NULL,
                PRIMARY KEY(partition_id, contribution, tbl, key))
            """,
        ]),
        // The device ledger (issue 37; docs/server.md, "Device ledger"): each device's last
        // report for each partition.
        (5, [
            """
            CREATE TABLE device_reports(
                device_id text COLLATE "C" NOT NULL, partition text COLLATE "C" NOT NULL,
                device_name text NOT NULL, user_name text NOT NULL, release text NOT NULL, state text NOT NULL,
                server_version bigint NOT NULL, client_file bigint NOT NULL, unsynced bigint NOT NULL,
                unsynced_since double precision, last_upload_at double precision, last_error_code bigint,
                last_error_at double precision, resets text NOT NULL, pending_reset text,
                reported_at double precision NOT NULL,
                PRIMARY KEY(device_id, partition))
            """,
            "CREATE INDEX device_reports_reported ON device_reports(reported_at)",
        ]),
        // The ledger keyed by identity (issue 46; docs/server.md, "Device ledger"): an entry is
        // the user's, so one identity never writes another's; existing rows keep their user, and
        // states an agent does not have become `other`.
        (6, [
            "ALTER TABLE device_reports DROP CONSTRAINT device_reports_pkey",
            "ALTER TABLE device_reports ALTER COLUMN user_name TYPE text COLLATE \"C\"",
            "ALTER TABLE device_reports ADD PRIMARY KEY(user_name, device_id, partition)",
            "UPDATE device_reports SET state = 'other' WHERE state NOT IN (\(DeviceLedgerEntry.agentStatesSQL))",
        ]),
        // Enrollment (issue 48; docs/server.md, "Enrollment"): enrolled devices, the keys that
        // admit them (secrets only as SHA-256 digests), and the audit trail of both. Names in
        // the "C" collation: the devices are listed in the same order as on SQLite.
        (7, [
            """
            CREATE TABLE devices(
                id text COLLATE "C" PRIMARY KEY, name text COLLATE "C" NOT NULL UNIQUE, tags text NOT NULL,
                credential_digest bytea NOT NULL, pending_digests bytea, rotation_requested_at double precision,
                credential_issued_at double precision NOT NULL,
                created_at double precision NOT NULL, enrolled_with_key text, last_seen_at double precision,
                revoked_at double precision)
            """,
            """
            CREATE TABLE enrollment_keys(
                id text COLLATE "C" PRIMARY KEY, digest bytea NOT NULL, tags text NOT NULL,
                uses_allowed bigint, uses_spent bigint NOT NULL DEFAULT 0, expires_at double precision,
                revoked_at double precision, note text NOT NULL, created_at double precision NOT NULL, created_by text NOT NULL)
            """,
            """
            CREATE TABLE audit_log(
                id bigserial PRIMARY KEY, at double precision NOT NULL, actor text NOT NULL, action text NOT NULL,
                subject text NOT NULL, detail text NOT NULL)
            """,
        ]),
        // The ledger at fleet scale (issue 49; docs/server.md, "Device ledger"): names and
        // states in the "C" collation (pages in the same order as on SQLite), an index per
        // filter and order of a page, each ending with the entry's key, and the report history,
        // one row per entry and 10-minute bucket.
        (8, [
            "ALTER TABLE device_reports ALTER COLUMN device_name TYPE text COLLATE \"C\"",
            "ALTER TABLE device_reports ALTER COLUMN state TYPE text COLLATE \"C\"",
            "DROP INDEX device_reports_reported",
            "CREATE INDEX device_reports_reported ON device_reports(reported_at, user_name, device_id, partition)",
            "CREATE INDEX device_reports_name ON device_reports(device_name, user_name, device_id, partition)",
            "CREATE INDEX device_reports_partition ON device_reports(partition, device_name, user_name, device_id)",
            "CREATE INDEX device_reports_state ON device_reports(state, device_name, user_name, device_id, partition)",
            "CREATE INDEX device_reports_unsynced ON device_reports(unsynced, user_name, device_id, partition)",
            "CREATE INDEX device_reports_device ON device_reports(device_id)",
            """
            CREATE TABLE device_history(
                device_id text COLLATE "C" NOT NULL, partition text COLLATE "C" NOT NULL, user_name text COLLATE "C" NOT NULL,
                bucket bigint NOT NULL, max_unsynced bigint NOT NULL, last_upload_at double precision, state text NOT NULL,
                reported_at double precision NOT NULL,
                PRIMARY KEY(device_id, partition, user_name, bucket))
            """,
            "CREATE INDEX device_history_bucket ON device_history(bucket)",
        ]),
        // Remote actions (issue 49; docs/server.md, "Remote actions"): what operators asked
        // devices to do, until answered or expired, and what each device accepts.
        (9, [
            """
            CREATE TABLE device_actions(
                id bigserial PRIMARY KEY, user_name text COLLATE "C" NOT NULL, device_id text COLLATE "C" NOT NULL,
                device_name text NOT NULL, kind text NOT NULL, partition text, requested_by text NOT NULL,
                requested_at double precision NOT NULL, expires_at double precision NOT NULL,
                state text NOT NULL CHECK(state IN (\(DeviceActionState.sqlList))), sent_at double precision,
                finished_at double precision, message text, report text)
            """,
            "CREATE INDEX device_actions_device ON device_actions(device_id, id)",
            "CREATE INDEX device_actions_pending ON device_actions(user_name, device_id) WHERE state IN ('queued', 'sent')",
            "CREATE INDEX device_actions_ended ON device_actions(finished_at) WHERE state NOT IN ('queued', 'sent')",
            """
            CREATE TABLE device_accepted_actions(
                user_name text COLLATE "C" NOT NULL, device_id text COLLATE "C" NOT NULL, kinds text NOT NULL,
                reported_at double precision NOT NULL, PRIMARY KEY(user_name, device_id))
            """,
        ]),
        // The ledger's text filter (issue 49; docs/server.md, "Device ledger"): trigram indexes
        // of the lowered name and id, which serve `q` (LIKE '%…%'). pg_trgm is a contrib
        // extension, trusted since PostgreSQL 13 (a role with CREATE on the database may add
        // it); where it cannot be added the migration goes on without them (a warning; `q`
        // then scans the ledger) — docs/server.md ("PostgreSQL") says how to add them later.
        (10, [
            """
            DO $tether$
            BEGIN
                CREATE EXTENSION IF NOT EXISTS pg_trgm;
                CREATE INDEX device_reports_name_text ON device_reports USING gin (\(DeviceLedgerSQL.postgresLower("device_name")) gin_trgm_ops);
                CREATE INDEX device_reports_id_text ON device_reports USING gin (\(DeviceLedgerSQL.postgresLower("device_id")) gin_trgm_ops);
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'no trigram index for the device ledger''s text filter (%): q scans the ledger (docs/server.md, PostgreSQL)', SQLERRM;
            END
            $tether$
            """,
        ]),
        // The ledger's stored health class (issue 49; docs/server.md, "Device ledger"): the
        // `health` order as an index walk (``DeviceLedgerHealthColumn``).
        (11, DeviceLedgerHealthColumn.postgresMigration),
        // Every version a restore of this database lost, with its salt (as SQLite's v10).
        (12, [
            """
            CREATE TABLE restored_away(
                partition_id bigint NOT NULL, version bigint NOT NULL, salt bigint NOT NULL,
                PRIMARY KEY(partition_id, version, salt))
            """,
            "INSERT INTO restored_away(partition_id, version, salt) SELECT partition_id, version, salt FROM heal_window",
        ]),
        // Subscriptions (issue 51): history row images and compensating writes, and the scopes
        // a client file's store was last given (``AppliedScopes``).
        (13, [
            "ALTER TABLE history ADD COLUMN images bytea",
            "ALTER TABLE history ADD COLUMN compensations bytea",
            "CREATE TABLE client_file_scopes(client_file bigint PRIMARY KEY, scopes bytea NOT NULL)",
        ]),
        // The filter index (issue 51, as SQLite's v12): per indexed column of each state row,
        // its value as IndexedValue bytes, and the columns kept.
        (14, [
            """
            CREATE TABLE state_index(
                partition_id bigint NOT NULL, tbl text COLLATE "C" NOT NULL, col text COLLATE "C" NOT NULL, value bytea NOT NULL,
                key bytea NOT NULL, PRIMARY KEY (partition_id, tbl, col, value, key))
            """,
            "CREATE TABLE state_index_columns(tbl text COLLATE \"C\" NOT NULL, col text COLLATE \"C\" NOT NULL, PRIMARY KEY (tbl, col))",
        ]),
        // When each store whose identity `terminateSync` forgot last bound (as SQLite's v13).
        (15, [
            "CREATE TABLE forgotten_client_files(id bigint PRIMARY KEY, partition_id bigint NOT NULL, last_seen double precision NOT NULL)",
        ]),
    ]

    /// Advisory lock keys (one bigint namespace per database): migrations, compaction.
    static let migrationLock: Int64 = 0x7465_7468_6572_0001
    static let compactionLock: Int64 = 0x7465_7468_6572_0002
    /// The first key of the two-key advisory locks that mark live instances (`'teth'`).
    static let instanceLockClass: Int32 = 0x7465_7468

    /// Brings the database to the newest layout; returns the versions applied now.
    @discardableResult
    package func migrate() async throws -> [Int] {
        try await transaction { connection in
            try await connection.guardedQuery("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: self.logger)
            try await connection.guardedQuery(
                "CREATE TABLE IF NOT EXISTS tether_migrations(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                logger: self.logger)
            var done: Set<Int> = []
            for try await version in try await connection.guardedQuery("SELECT version FROM tether_migrations", logger: self.logger).decode(Int.self) {
                done.insert(version)
            }
            var applied: [Int] = []
            for migration in Self.migrations where !done.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.guardedQuery(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                }
                try await connection.guardedQuery("INSERT INTO tether_migrations(version) VALUES (\(migration.version))", logger: self.logger)
                applied.append(migration.version)
            }
            return applied
        }
    }
}
