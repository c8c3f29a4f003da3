import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

extension PartitionStore {
    /// Copies the store to `destination` with SQLite's online backup API while applications
    /// keep writing (docs/contract.md: Reset steps step 2). The copy is one consistent snapshot: it is taken inside
    /// a read transaction in a single backup step, which WAL mode lets writers run beside.
    ///
    /// The copy is written to `<destination>.partial`, switched to rollback-journal mode (so it
    /// is one standalone file), checked with `PRAGMA quick_check`, synced to disk and renamed
    /// over `destination`: a crash never leaves a half-written file under the final name. The
    /// backup gets `mode` through its descriptor before the rename. A symbolic link at
    /// `destination` is refused (``StoreError/symbolicLink(path:place:)``), never followed.
    public func backup(to destination: String, mode: mode_t = 0o640) async throws(StoreError) {
        try NoFollow.refuseLinks(sqlite: destination, place: .backup)
        let partial = destination + ".partial"
        for leftover in [partial, partial + "-wal", partial + "-shm", partial + "-journal"] {
            try? FileManager.default.removeItem(atPath: leftover)  // a link is removed, not followed
        }
        // Created here, without following a link, with the backup's mode (SQLite keeps the mode
        // of an existing file); a link planted since the removal is refused.
        let created = try NoFollow.open(partial, flags: O_RDWR | O_CREAT | O_EXCL, mode: mode, place: .backup)
        fchmod(created, mode)  // whatever the umask
        Glibc.close(created)
        do {
            try NoFollow.refuseLinks(sqlite: partial, place: .backup)
            let target = try DatabaseQueue(path: partial)
            try await withPool { pool in
                try await pool.read { source in
                    try target.writeWithoutTransaction { copy in
                        try source.backup(to: copy)
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
