import Foundation
import GRDB
import Synchronization
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

@Suite struct PartitionStoreBackupTests {
    @Test func backsUpConsistentlyWhileAnApplicationWrites() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let app = try appConnection(store.path)
        let stop = StopFlag()
        let backups = [dir.appending("backup-1.sqlite"), dir.appending("backup-2.sqlite"), dir.appending("backup-3.sqlite")]

        let written = try await withThrowingTaskGroup(of: Int.self) { group in
            // The writer commits pairs of rows in one transaction, until the backups are done.
            group.addTask {
                var sku: Int64 = 0
                while !stop.value.load(ordering: .relaxed) || sku < 200 {
                    let first = sku
                    try await app.write { db in
                        for offset in 0..<2 {
                            try db.execute(
                                sql: "INSERT INTO items (sku, name, price) VALUES (?, ?, ?)",
                                arguments: [first + Int64(offset), "n\(first)", Double(first) / 3])
                        }
                    }
                    sku += 2
                }
                return Int(sku)
            }
            for path in backups {
                try await eventually("more than 20 pending changes") { try await store.pendingChangeCount() > 20 }
                try await store.backup(to: path)
            }
            stop.value.store(true, ordering: .relaxed)
            return try await group.next() ?? 0
        }
        #expect(written >= 200)
        for path in backups {
            #expect(try PartitionStore.integrityCheck(ofFileAt: path) == [])
            // A standalone file: rollback-journal mode, no -wal beside it, no leftover partial file.
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
            #expect(try await sqlite3(path, "PRAGMA journal_mode").stdout == "delete\n")
            // Consistent: whole transactions only (rows come in pairs), change log included.
            let count = try await sqlite3(path, "SELECT count(*) FROM items").stdout
            let rows = try #require(Int(count.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(rows % 2 == 0 && rows > 0)
            #expect(try PartitionStore.pendingChanges(ofStoreAt: path).count == rows)
            #expect(try PartitionStore.canonicalDump(ofStoreAt: path).hasPrefix("[items]\ni:0 | "))
        }
        #expect(try await store.integrityCheck() == [])
        try app.close()
        try store.close()
    }

    @Test func aBackupReplacesAnEarlierFileAtTheSamePath() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let path = dir.appending("backup.sqlite")
        try await store.backup(to: path)
        try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'pen', NULL)")
        try await store.backup(to: path)
        #expect(try PartitionStore.canonicalDump(ofStoreAt: path) == "[items]\ni:1 | name=t:\"pen\" | price=null\n[orders]\n")
        try store.close()
    }

    /// A backup must never open the store file through a descriptor of its own: closing it
    /// drops every POSIX lock the process holds on the file, SQLite's included, and an
    /// application's connection closing next takes itself for the last one, checkpoints and
    /// deletes the WAL the agent still writes to (an earlier file-copy backup did, and lost the
    /// agent's next commits). The reflink and `copy_file_range` use SQLite's own descriptors. After a backup, an
    /// application opens, reads and closes; the agent's WAL is still there and its next write
    /// survives closing and reopening the store.
    @Test func aBackupKeepsTheAgentsLocksSoAnApplicationNeverDeletesTheWALUnderIt() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items (sku, name) VALUES (1, 'one')")
        _ = try await store.pendingChangeCount()  // the agent's connections are open
        try await store.backup(to: dir.appending("backup.sqlite"))
        #expect(try await sqlite3(store.path, "SELECT count(*) FROM items").stdout == "1\n")
        #expect(FileManager.default.fileExists(atPath: store.path + "-wal"), "the agent's WAL is still there")
        try await store.setClientResetMarker("after the backup")
        try store.close()
        let reopened = try await makeStore(dir)
        #expect(try await reopened.metadata().clientResetMarker == "after the backup")
        try reopened.close()
    }

    /// The backup copies the database file and its WAL: commits a checkpoint could not move
    /// into the file yet (an application holds a read transaction that needs the older pages)
    /// are in the backup, and the store and its WAL are unchanged by it.
    @Test func aBackupHoldsTheCommitsStillInTheWAL() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await sqlite3(store.path, "INSERT INTO items (sku, name) VALUES (1, 'before the reader')")
        let backup = dir.appending("backup.sqlite")
        // An application's snapshot (an open read transaction) the checkpoint must keep: the
        // pages the later commits change stay in the WAL.
        let reader = try DatabasePool(path: store.path)
        let snapshot = try reader.makeSnapshot()
        #expect(try await snapshot.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM items") } == 1)
        let app = try appConnection(store.path)
        try await app.write { db in
            for sku in 2...500 { try db.execute(sql: "INSERT INTO items (sku, name) VALUES (?, 'in the WAL')", arguments: [sku]) }
        }
        try app.close()
        _ = try await store.pendingChangeCount()
        let walBefore = try FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.size] as? Int ?? 0
        #expect(walBefore > 0)
        let copy = try await store.backup(to: backup)
        // Linux copies within a filesystem in the kernel (reflink or copy_file_range), through
        // SQLite's own descriptors: never read back through SQLite here.
        #expect(copy.method == .reflink || copy.method == .copyFileRange, "\(copy.method.name)")
        #expect(copy.bytes >= Int64(walBefore))
        #expect(try await sqlite3(backup, "SELECT count(*) FROM items").stdout == "500\n")
        #expect(try PartitionStore.pendingChanges(ofStoreAt: backup).count == 500)
        #expect(try PartitionStore.integrityCheck(ofFileAt: backup) == [])
        for suffix in ["-wal", "-shm", ".partial", ".partial-wal", ".partial-shm"] {
            #expect(!FileManager.default.fileExists(atPath: backup + suffix), "\(suffix) left beside the backup")
        }
        #expect(try await sqlite3(store.path, "SELECT count(*) FROM items").stdout == "500\n")
        #expect(try await snapshot.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM items") } == 1)
        try reader.close()
        try store.close()
    }

    @Test func integrityCheckOfAMissingFileIsAnError() {
        #expect(throws: StoreError.self) { try PartitionStore.integrityCheck(ofFileAt: "/nonexistent/store.sqlite") }
    }
}
