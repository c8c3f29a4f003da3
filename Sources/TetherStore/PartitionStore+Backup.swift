import Foundation
import CTetherShims
import GRDB
#if canImport(Glibc)
import Glibc
#endif

extension PartitionStore {
    /// Copies the store to `destination` while applications keep working (docs/contract.md:
    /// Reset steps step 2), as one consistent snapshot, at file-copy speed when it can:
    ///
    /// 1. the agent takes the store's write lock (`BEGIN IMMEDIATE`: applications' writes wait,
    ///    within their busy timeout, as they do for any download; their reads go on);
    /// 2. a second connection checkpoints the WAL into the file (`PASSIVE`: it never waits);
    /// 3. if that moved every committed frame, the file alone is the store: it is copied whole,
    ///    in 1 MiB reads through the writer connection's own file handle (``BackupMethod/fileCopy``),
    ///    and the lock is released. Never through a descriptor of its own, which a reflink or
    ///    `copy_file_range(2)` would need: closing it would drop every POSIX lock the agent holds
    ///    on the store, SQLite's included, and an application's connection could then checkpoint
    ///    and delete the WAL under the agent's connections (SQLite's "How To Corrupt" §2.2);
    /// 4. if not (an application's read transaction pins older frames), the lock is released
    ///    and SQLite's online backup API copies the pages inside one read transaction instead.
    ///
    /// The copy is written to `<destination>.partial`, switched to rollback-journal mode (so it
    /// is one standalone file), checked with `PRAGMA quick_check`, synced to disk and renamed
    /// over `destination`: a crash never leaves a half-written file under the final name. The
    /// backup gets `mode` through its descriptor before the rename. A symbolic link at
    /// `destination` is refused (``StoreError/symbolicLink(path:place:)``), never followed.
    @discardableResult
    public func backup(to destination: String, mode: mode_t = 0o640) async throws(StoreError) -> BackupMethod {
        try NoFollow.refuseLinks(sqlite: destination, place: .backup)
        let partial = destination + ".partial"
        for leftover in [partial, partial + "-wal", partial + "-shm", partial + "-journal"] {
            try? FileManager.default.removeItem(atPath: leftover)  // a link is removed, not followed
        }
        // Created here, without following a link, with the backup's mode (SQLite keeps the mode
        // of an existing file); a link planted since the removal is refused.
        let created = try NoFollow.open(partial, flags: O_RDWR | O_CREAT | O_EXCL, mode: mode, place: .backup)
        fchmod(created, mode)  // whatever the umask
        let method: BackupMethod
        do {
            let copied: BackupMethod?
            do {
                copied = try await copyWholeFile(into: created)
            } catch {
                Glibc.close(created)
                throw error
            }
            Glibc.close(created)
            try NoFollow.refuseLinks(sqlite: partial, place: .backup)
            let target = try DatabaseQueue(path: partial)
            if let copied {
                method = copied
            } else {
                method = .backupAPI
                try await withPool { pool in
                    try await pool.read { source in
                        try target.writeWithoutTransaction { copy in
                            try source.backup(to: copy)
                        }
                    }
                }
            }
            try await target.writeWithoutTransaction { copy in
                try copy.execute(sql: "PRAGMA journal_mode = DELETE")
                let problems = try String.fetchAll(copy, sql: "PRAGMA quick_check")
                guard problems == ["ok"] else { throw StoreError.corrupt(path: partial, problems: problems) }
            }
            try target.close()
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw StoreError.wrap(error, path: destination)
        }
        try FileSync.sync(partial)
        try NoFollow.refuseLink(destination, place: .backup)
        guard rename(partial, destination) == 0 else {
            throw StoreError.io(path: destination, operation: "rename", errno: errno)
        }
        try FileSync.sync((destination as NSString).deletingLastPathComponent)
        return method
    }

    /// Steps 1–3 of ``backup(to:mode:)``: the whole file copied into `target` under the write
    /// lock once a checkpoint moved every committed frame into it; nil (nothing written) when
    /// one did not.
    private func copyWholeFile(into target: Int32) async throws -> BackupMethod? {
        let path = self.path
        return try await withPool { pool in
            try await pool.writeWithoutTransaction { db -> BackupMethod? in
                try db.execute(sql: "BEGIN IMMEDIATE")
                defer { try? db.execute(sql: "ROLLBACK") }
                // A connection inside a transaction cannot checkpoint: a second one does. With
                // the write lock held nothing commits meanwhile, so "every frame checkpointed"
                // means the file holds everything committed, and stays so until the lock goes.
                var checkpointer = Configuration()
                checkpointer.busyMode = .immediateError
                checkpointer.label = "tether.store.backup"
                let queue = try DatabaseQueue(path: path, configuration: checkpointer)
                defer { try? queue.close() }
                let result = try queue.inDatabase { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
                guard let result, result[0] as Int == 0, result[1] as Int == result[2] as Int else { return nil }
                guard let connection = db.sqliteConnection, tether_sqlite_copy_main_file(UnsafeMutableRawPointer(connection), target) >= 0
                else { throw StoreError.io(path: path, operation: "copy", errno: errno) }
                return .fileCopy
            }
        }
    }

    /// The problems `PRAGMA integrity_check` reports; empty when the store is sound.
    public func integrityCheck() async throws(StoreError) -> [String] {
        let problems = try await read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return problems == ["ok"] ? [] : problems
    }

    /// `PRAGMA integrity_check` of any SQLite file (e.g. a backup); empty when it is sound.
    public static func integrityCheck(ofFileAt path: String, place: StoreFilePlace = .backup) throws(StoreError) -> [String] {
        try NoFollow.refuseLinks(sqlite: path, place: place)
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.io(path: path, operation: "open", errno: ENOENT)
        }
        let problems = try readFile(at: path, place: place) { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return problems == ["ok"] ? [] : problems
    }
}

/// fsync of files and directories, so renames survive a crash.
enum FileSync {
    static func sync(_ path: String) throws(StoreError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)  // fsync only: changes nothing
        guard fd >= 0 else { throw StoreError.io(path: path, operation: "open", errno: errno) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw StoreError.io(path: path, operation: "fsync", errno: errno) }
    }
}

/// How ``PartitionStore/backup(to:mode:)`` copied a store.
public enum BackupMethod: String, Sendable, Hashable, CaseIterable {
    /// The whole file, under the write lock after a complete checkpoint.
    case fileCopy = "file_copy"
    /// SQLite's online backup API, page by page: an application's read transaction kept the
    /// WAL from being checkpointed into the file.
    case backupAPI = "sqlite_backup"
}
