PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
INSERT INTO grdb_migrations VALUES('v1: partitions and resets');
CREATE TABLE IF NOT EXISTS "partition" ("name" TEXT PRIMARY KEY NOT NULL, "paused" BOOLEAN NOT NULL DEFAULT 0, "stoppedReason" TEXT, "lastErrorCode" INTEGER, "lastErrorMessage" TEXT, "lastErrorAt" DOUBLE);
INSERT INTO "partition" VALUES('shop',1,NULL,NULL,NULL,NULL);
CREATE TABLE IF NOT EXISTS "reset" ("id" TEXT PRIMARY KEY NOT NULL, "partition" TEXT NOT NULL, "phase" TEXT NOT NULL, "startedAt" DOUBLE NOT NULL, "record" BLOB NOT NULL);
CREATE INDEX "reset_on_partition" ON "reset"("partition");
COMMIT;
