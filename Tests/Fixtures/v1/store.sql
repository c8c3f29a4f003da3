PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
INSERT INTO grdb_migrations VALUES('tether-v1');
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
);
INSERT INTO _tether_meta VALUES(1,'shop',1,'{"tables":[{"columns":[{"name":"customer","nullable":false,"type":"text"},{"name":"id","nullable":false,"type":"text"},{"name":"note","nullable":true,"type":"text"},{"name":"total","nullable":false,"type":"real"}],"name":"orders","primaryKey":"id"}],"version":1}',1,5897934567510296473,1,778524892287919635,4,0,NULL);
CREATE TABLE _tether_apply (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  active INTEGER NOT NULL DEFAULT 0
);
INSERT INTO _tether_apply VALUES(1,0);
CREATE TABLE _tether_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tbl TEXT NOT NULL,
  pk NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('insert', 'update', 'delete'))
);
INSERT INTO _tether_changes VALUES(5,'orders','A','update');
INSERT INTO _tether_changes VALUES(6,'orders','D','insert');
INSERT INTO _tether_changes VALUES(7,'orders','C','delete');
INSERT INTO _tether_changes VALUES(8,'orders','B','update');
INSERT INTO _tether_changes VALUES(9,'orders','B','update');
CREATE TABLE _tether_change_fields (
  seq INTEGER NOT NULL,
  col TEXT NOT NULL,
  value,
  PRIMARY KEY (seq, col)
) WITHOUT ROWID;
INSERT INTO _tether_change_fields VALUES(5,'total',9.5);
INSERT INTO _tether_change_fields VALUES(6,'customer','dan');
INSERT INTO _tether_change_fields VALUES(6,'note','new');
INSERT INTO _tether_change_fields VALUES(6,'total',5.0);
INSERT INTO _tether_change_fields VALUES(8,'note','rush');
INSERT INTO _tether_change_fields VALUES(8,'total',2.5);
INSERT INTO _tether_change_fields VALUES(9,'note','again');
CREATE TABLE IF NOT EXISTS "orders" (
  "id" TEXT NOT NULL PRIMARY KEY CHECK (typeof("id") = 'text'),
  "customer" TEXT NOT NULL CHECK (typeof("customer") = 'text'),
  "note" TEXT CHECK ("note" IS NULL OR (typeof("note") = 'text')),
  "total" REAL NOT NULL CHECK (typeof("total") = 'real')
);
INSERT INTO orders VALUES('A','ann',NULL,9.5);
INSERT INTO orders VALUES('B','bob','again',2.5);
INSERT INTO orders VALUES('E','eve','it''s',4.0);
INSERT INTO orders VALUES('D','dan','new',5.0);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('_tether_changes',9);
CREATE INDEX _tether_changes_row ON _tether_changes (tbl, pk, seq);
CREATE TRIGGER "_tether_trg_orders_del" AFTER DELETE ON "orders"
WHEN (SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1
BEGIN
  INSERT INTO _tether_changes (tbl, pk, kind) VALUES ('orders', OLD."id", 'delete');
END;
CREATE TRIGGER "_tether_trg_orders_ins" AFTER INSERT ON "orders"
WHEN (SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1
BEGIN
  INSERT INTO _tether_changes (tbl, pk, kind) VALUES ('orders', NEW."id", 'insert');
  INSERT INTO _tether_change_fields (seq, col, value) VALUES (last_insert_rowid(), 'customer', NEW."customer"), (last_insert_rowid(), 'note', NEW."note"), (last_insert_rowid(), 'total', NEW."total");
END;
CREATE TRIGGER "_tether_trg_orders_rekey" AFTER UPDATE ON "orders"
WHEN (SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1 AND OLD."id" IS NOT NEW."id"
BEGIN
  INSERT INTO _tether_changes (tbl, pk, kind) VALUES ('orders', OLD."id", 'delete');
  INSERT INTO _tether_changes (tbl, pk, kind) VALUES ('orders', NEW."id", 'insert');
  INSERT INTO _tether_change_fields (seq, col, value) VALUES (last_insert_rowid(), 'customer', NEW."customer"), (last_insert_rowid(), 'note', NEW."note"), (last_insert_rowid(), 'total', NEW."total");
END;
CREATE TRIGGER "_tether_trg_orders_ro_del" BEFORE DELETE ON "orders"
WHEN (SELECT read_only FROM _tether_meta WHERE id = 1) IS 1 AND (SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1
BEGIN
  SELECT RAISE(ABORT, 'partition shop is read-only');
END;
CREATE TRIGGER "_tether_trg_orders_ro_ins" BEFORE INSERT ON "orders"
WHEN (SELECT read_only FROM _tether_meta WHERE id = 1) IS 1 AND (SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1
BEGIN
  SELECT RAISE(ABORT, 'partition shop is read-only');
END;
CREATE TRIGGER "_tether_trg_orders_ro_upd" BEFORE UPDATE ON "orders"
WHEN (SELECT read_only FROM _tether_meta WHERE id = 1) IS 1 AND (SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1
BEGIN
  SELECT RAISE(ABORT, 'partition shop is read-only');
END;
CREATE TRIGGER "_tether_trg_orders_upd" AFTER UPDATE ON "orders"
WHEN (SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1 AND OLD."id" IS NEW."id" AND (OLD."customer" IS NOT NEW."customer" OR OLD."note" IS NOT NEW."note" OR OLD."total" IS NOT NEW."total")
BEGIN
  INSERT INTO _tether_changes (tbl, pk, kind) VALUES ('orders', NEW."id", 'update');
  INSERT INTO _tether_change_fields (seq, col, value)
    SELECT last_insert_rowid(), 'customer', NEW."customer" WHERE OLD."customer" IS NOT NEW."customer"
    UNION ALL SELECT last_insert_rowid(), 'note', NEW."note" WHERE OLD."note" IS NOT NEW."note"
    UNION ALL SELECT last_insert_rowid(), 'total', NEW."total" WHERE OLD."total" IS NOT NEW."total";
END;
COMMIT;
