import GRDB
import TetherProtocol

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
        migrator.registerMigration("tether-v2-log") { db in
            try migrateToRowLog(db)
        }
        // The store's lineage (docs/sync-model.md, "Store lineage"): each session's upload salt
        // with the seqs it may send, recorded before it sends them and dropped once the server
        // acknowledged them.
        migrator.registerMigration("tether-v3-lineage") { db in
            try db.execute(sql: """
                CREATE TABLE _tether_uploads (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  salt INTEGER NOT NULL UNIQUE,
                  first_seq INTEGER NOT NULL,
                  last_seq INTEGER NOT NULL
                )
                """)
        }
        // The subscriptions the store's rows are of (issue 51): `SubscriptionSet.canonicalBytes`,
        // NULL for the whole partition (every store before subscriptions).
        migrator.registerMigration("tether-v4-subscriptions") { db in
            try db.execute(sql: "ALTER TABLE _tether_meta ADD COLUMN subscriptions BLOB")
        }
        // The scope token of a store whose rows are the whole partition but for what its grants
        // impose (docs/subscriptions.md "Subscriptions a grant imposes"); with a set, the token is
        // in `subscriptions` as before.
        migrator.registerMigration("tether-v5-scope-token") { db in
            try db.execute(sql: "ALTER TABLE _tether_meta ADD COLUMN scope_token INTEGER NOT NULL DEFAULT 0")
        }
        return migrator
    }

    /// Version 2 of the change log: one row per change naming the row (and an update's changed
    /// columns), no values and no index — capture becomes one B-tree insert (docs/store.md
    /// "Change log"). Converts a version-1 log in place: every entry keeps its seq, kind and
    /// key (an update keeps the names of its fields; the values were the row's anyway, see
    /// docs/store.md), the seq counter carries on where it was (seqs are never reused), and the
    /// capture triggers are replaced in the same transaction, so no application write ever
    /// meets a half-converted store.
    static func migrateToRowLog(_ db: Database) throws {
        // No CHECK on `kind` and no declared type on `pk` (keys keep their storage class): the
        // triggers write only literals and the row's key.
        try db.execute(sql: """
            CREATE TABLE _tether_log (
              seq INTEGER PRIMARY KEY AUTOINCREMENT,
              tbl TEXT NOT NULL,
              pk NOT NULL,
              kind TEXT NOT NULL,
              cols TEXT
            );
            CREATE TABLE _tether_held (
              tbl TEXT NOT NULL,
              pk NOT NULL,
              fields BLOB NOT NULL,
              PRIMARY KEY (tbl, pk)
            ) WITHOUT ROWID;
            INSERT INTO _tether_log (seq, tbl, pk, kind, cols)
            SELECT c.seq, c.tbl, c.pk, c.kind,
                   CASE c.kind WHEN 'update' THEN
                     (SELECT group_concat(f.col, ',') FROM _tether_change_fields AS f WHERE f.seq = c.seq)
                   END
            FROM _tether_changes AS c ORDER BY c.seq;
            DELETE FROM sqlite_sequence WHERE name = '_tether_log';
            INSERT INTO sqlite_sequence (name, seq) SELECT '_tether_log', seq FROM sqlite_sequence WHERE name = '_tether_changes';
            """)
        let meta = try Row.fetchOne(db, sql: "SELECT partition FROM _tether_meta WHERE id = 1")
        let schema = try meta.map { _ in try MetaTable.recordedSchema(db, path: db.configuration.label ?? "store") }
        // Version 1 kept an update's values in the log; where the row is gone (the server deleted
        // it under a pending local update) they are kept as the new log keeps them.
        for table in schema?.tables ?? [] where try db.tableExists(table.name) {
            let rows = try Row.fetchCursor(db, sql: """
                SELECT c.pk, f.col, f.value FROM _tether_changes AS c JOIN _tether_change_fields AS f ON f.seq = c.seq
                WHERE c.tbl = ? AND c.kind = 'update'
                  AND NOT EXISTS (SELECT 1 FROM \(StoreSQL.quote(table.name)) AS r WHERE r.\(StoreSQL.quote(table.primaryKey)) = c.pk)
                ORDER BY c.seq
                """, arguments: [table.name])
            var held: [RowKey: [String: FieldValue]] = [:]
            while let row = try rows.next() {
                guard let key = RowKey(row["pk"] as DatabaseValue), let column: String = row["col"] else { continue }
                held[key, default: [:]][column] = FieldValue(row["value"] as DatabaseValue)
            }
            for (key, fields) in held { try HeldValues.hold(db, LoggedRow(table: table.name, key: key), fields: fields) }
        }
        try PartitionStore.dropCaptureTriggers(db)
        try db.execute(sql: "DROP TABLE _tether_change_fields; DROP TABLE _tether_changes")
        if let meta, let schema {
            try PartitionStore.installTriggers(db, schema: schema, partition: meta["partition"])
        }
    }
}
