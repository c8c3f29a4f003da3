import GRDB

/// Versioned migrations of the agent's own `_tether*` tables. Never edit a registered
/// migration: add a new one (GRDB records applied ones in `grdb_migrations`).
enum InternalMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("tether-v1") { db in
            // One row (id = 1): the store's identity and sync position.
            try db.execute(sql: """
                CREATE TABLE _tether_meta (
                  id INTEGER PRIMARY KEY CHECK (id = 1),
                  partition TEXT NOT NULL,
                  schema_version INTEGER NOT NULL,
                  schema_json TEXT NOT NULL,
                  client_file_id INTEGER,
                  client_file_salt INTEGER,
                  server_version INTEGER NOT NULL DEFAULT 0,
                  server_version_salt INTEGER NOT NULL DEFAULT 0,
                  integrated_seq INTEGER NOT NULL DEFAULT 0,
                  read_only INTEGER NOT NULL DEFAULT 0 CHECK (read_only IN (0, 1)),
                  client_reset_marker TEXT
                )
                """)
            // The apply flag read by the capture triggers' WHEN clauses. The agent sets it to 1
            // inside its own write transactions and back to 0 before committing.
            try db.execute(sql: """
                CREATE TABLE _tether_apply (
                  id INTEGER PRIMARY KEY CHECK (id = 1),
                  active INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO _tether_apply (id, active) VALUES (1, 0);
                """)
            // The change log: one row per captured change, `seq` in commit order, never reused.
            // `pk` has no declared type (BLOB affinity), so keys keep their storage class.
            try db.execute(sql: """
                CREATE TABLE _tether_changes (
                  seq INTEGER PRIMARY KEY AUTOINCREMENT,
                  tbl TEXT NOT NULL,
                  pk NOT NULL,
                  kind TEXT NOT NULL CHECK (kind IN ('insert', 'update', 'delete'))
                );
                CREATE INDEX _tether_changes_row ON _tether_changes (tbl, pk, seq);
                """)
            // The fields of inserts and updates, each value stored exactly as SQLite holds it
            // (no declared type: integers, reals, text, blobs and nulls keep their class).
            // WITHOUT ROWID keeps last_insert_rowid() at the change row inside the triggers.
            try db.execute(sql: """
                CREATE TABLE _tether_change_fields (
                  seq INTEGER NOT NULL,
                  col TEXT NOT NULL,
                  value,
                  PRIMARY KEY (seq, col)
                ) WITHOUT ROWID
                """)
        }
        return migrator
    }
}
