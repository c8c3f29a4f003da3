import Foundation
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// Stores written by the previous version (Tests/Fixtures/v1, made by that version's programs:
/// a device with five unsynced changes) open with this one: the change log is converted in
/// place, nothing pending is lost, and capture carries on.
@Suite struct InternalMigrationsTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/v1").path
    static let partition = PartitionName("shop")!

    /// The fixture's store loaded into `dir` (by sqlite3, as the old agent left it), then `prepare` run on it.
    private func loadStore(_ dir: TemporaryDirectory, prepare: String = "") async throws -> String {
        let path = dir.appending("shop.sqlite")
        let sql = try String(contentsOfFile: Self.fixtures + "/store.sql", encoding: .utf8)
        #expect(try await sqlite3(path, sql + prepare).status == 0)
        return path
    }

    private func open(_ path: String) async throws -> PartitionStore {
        let schema = try #require(try PartitionStore.recordedSchema(path: path))
        return try await PartitionStore.open(path: path, partition: Self.partition, schema: schema)
    }

    @Test func aVersion1StoreKeepsItsUnsyncedChangesAndCapturesOn() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let path = try await loadStore(dir)
        #expect(try await sqlite3(path, "SELECT count(*) FROM _tether_changes").stdout == "5\n")
        let store = try await open(path)
        defer { try? store.close() }

        #expect(try await sqlite3(path, "SELECT group_concat(identifier, ',') FROM grdb_migrations").stdout == "tether-v1,tether-v2-log,tether-v3-lineage,tether-v4-subscriptions,tether-v5-scope-token\n")
        #expect(try await sqlite3(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('_tether_changes', '_tether_change_fields')").stdout == "0\n")
        #expect(try await sqlite3(path, "SELECT seq, pk, kind, coalesce(cols, '-') FROM _tether_log ORDER BY seq").stdout == """
            5|A|update|total
            6|D|insert|-
            7|C|delete|-
            8|B|update|note,total
            9|B|update|note

            """)
        let meta = try await store.metadata()
        #expect(meta.integratedSeq == 4 && meta.serverVersion.version == 1 && meta.clientFile?.id == 1)
        #expect(try await store.lastAssignedSeq() == 9)
        // The batch the new version uploads: what the old one would have, collapsed per row.
        let batch = try #require(try await store.pendingChanges(after: meta.integratedSeq))
        #expect(batch.afterSeq == 4 && batch.firstSeq == 5 && batch.lastSeq == 9)
        #expect(Set(batch.changeset.changes) == [
            .update("orders", .text("A"), ["total": .real(9.5)]),
            .insert("orders", .text("D"), ["customer": .text("dan"), "total": .real(5), "note": .text("new")]),
            .delete("orders", .text("C")),
            .update("orders", .text("B"), ["note": .text("again"), "total": .real(2.5)]),
        ])
        // Seqs carry on where the old log stopped (never reused), with the new triggers.
        #expect(try await sqlite3(path, "INSERT INTO orders (id, customer, total) VALUES ('F', 'fay', 6.0)").status == 0)
        #expect(try await sqlite3(path, "SELECT seq, pk, kind FROM _tether_log WHERE seq > 9").stdout == "10|F|insert\n")
        #expect(try await sqlite3(path, "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name)").stdout
            == "_tether_trg_orders_del,_tether_trg_orders_ins,_tether_trg_orders_rekey,_tether_trg_orders_upd\n")
        // Acknowledged, the log empties.
        #expect(try await store.acknowledge(throughSeq: 10) == 6)
        #expect(try await store.pendingChangeCount() == 0)
    }

    /// The old agent applied a server delete of B while B had pending local updates (their
    /// values were in the old log): the new log keeps them aside, so the update is still
    /// uploaded and a server insert that re-creates B gets the local fields.
    @Test func theValuesOfARowTheServerDeletedUnderAPendingUpdateAreKept() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        // What the old agent's apply did: the capture triggers quiet under the apply flag.
        let path = try await loadStore(dir, prepare: """
            BEGIN;
            UPDATE _tether_apply SET active = 1;
            DELETE FROM orders WHERE id = 'B';
            UPDATE _tether_apply SET active = 0;
            COMMIT;
            """)
        let store = try await open(path)
        defer { try? store.close() }
        let batch = try #require(try await store.pendingChanges(after: 4))
        #expect(batch.changeset.changes.contains(.update("orders", .text("B"), ["note": .text("again"), "total": .real(2.5)])))
        try await store.apply([DownloadEntry(
            serverVersion: ServerVersion(version: 2, salt: 22), integratedClientSeq: 4,
            changeset: Changeset([.insert("orders", .text("B"), ["customer": .text("bo"), "total": .real(7), "note": .null])]))])
        #expect(try await sqlite3(path, "SELECT customer, total, note FROM orders WHERE id = 'B'").stdout == "bo|2.5|again\n")
        #expect(try await sqlite3(path, "SELECT count(*) FROM _tether_held").stdout == "0\n")
    }

    @Test func aReadOnlyVersion1StoreStillRefusesApplicationWrites() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let path = try await loadStore(dir, prepare: "UPDATE _tether_meta SET read_only = 1;")
        let store = try await open(path)
        defer { try? store.close() }
        let refused = try await sqlite3(path, "INSERT INTO orders (id, customer, total) VALUES ('F', 'fay', 6.0)")
        #expect(refused.status != 0 && refused.stderr.contains("partition shop is read-only"), "\(refused.stderr)")
        try await store.setReadOnly(false)
        #expect(try await sqlite3(path, "INSERT INTO orders (id, customer, total) VALUES ('F', 'fay', 6.0)").status == 0)
        #expect(try await sqlite3(path, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_ro\\_%' ESCAPE '\\'").stdout == "0\n")
    }

    /// A store a later release converted (a migration this release does not know) is refused
    /// with a clear error, and left exactly as it was.
    @Test func aStoreALaterReleaseConvertedIsRefusedUntouched() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let path = try await loadStore(dir)
        try await open(path).close()
        #expect(try await sqlite3(path, "INSERT INTO grdb_migrations VALUES ('tether-v9-future')").status == 0)
        let before = try await sqlite3(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name").stdout
        let error = await #expect(throws: StoreError.self) { try await open(path) }
        #expect(error == .writtenByNewerRelease(path: path, migrations: ["tether-v9-future"]))
        #expect(error?.hint.contains("later release") == true)
        #expect(try await sqlite3(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name").stdout == before)
    }
}
