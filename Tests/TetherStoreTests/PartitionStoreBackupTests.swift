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

    /// A backup must never open the store file through a descriptor of the agent's own (as a
    /// reflink or `copy_file_range` would need): closing it drops every POSIX lock the process
    /// holds on the file, SQLite's included, and an application's connection closing next takes
    /// itself for the last one, checkpoints and deletes the WAL the agent still writes to (a
    /// tried file-copy backup did, and lost the agent's next commits). After a backup, an
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

    @Test func integrityCheckOfAMissingFileIsAnError() {
        #expect(throws: StoreError.self) { try PartitionStore.integrityCheck(ofFileAt: "/nonexistent/store.sqlite") }
    }
}
