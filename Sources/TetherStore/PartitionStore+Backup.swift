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
    /// over `destination`: a crash never leaves a half-written file under the final name.
    public func backup(to destination: String) async throws(StoreError) {
        let partial = destination + ".partial"
        for leftover in [partial, partial + "-wal", partial + "-shm", partial + "-journal"] {
            try? FileManager.default.removeItem(atPath: leftover)
        }
        do {
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
    public static func integrityCheck(ofFileAt path: String) throws(StoreError) -> [String] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.io(path: path, operation: "open", errno: ENOENT)
        }
        let problems = try readFile(at: path) { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return problems == ["ok"] ? [] : problems
    }
}

/// fsync of files and directories, so renames survive a crash.
enum FileSync {
    static func sync(_ path: String) throws(StoreError) {
        let fd = Glibc.open(path, O_RDONLY)
        guard fd >= 0 else { throw StoreError.io(path: path, operation: "open", errno: errno) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw StoreError.io(path: path, operation: "fsync", errno: errno) }
    }
}
