import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

extension PartitionStore {
    /// Copies the store to `destination` while applications keep reading and writing
    /// (docs/contract.md: Reset steps step 2), at file-copy speed: holding the write lock for
    /// as long as the copy takes (applications wait in their busy timeout, as for any writer), the database
    /// file and its WAL are copied as files — a reflink where the filesystem shares extents,
    /// else `copy_file_range` — through the descriptors SQLite holds (``StoreFileCopy``). The
    /// pair is one consistent snapshot: what a power cut at that moment would leave on disk,
    /// which SQLite recovers.
    ///
    /// The copy is written to `<destination>.partial` (and its `-wal`), switched to
    /// rollback-journal mode (which checkpoints the copied WAL into it, leaving one standalone
    /// file), checked with `PRAGMA quick_check`, synced to disk and renamed over `destination`:
    /// a crash never leaves a half-written file under the final name. The backup gets `mode`
    /// through its descriptor before the rename. A symbolic link at `destination` is refused
    /// (``StoreError/symbolicLink(path:place:)``), never followed. Returns how the files were
    /// copied and how many bytes.
    @discardableResult
    package func backup(to destination: String, mode: mode_t = 0o640) async throws(StoreError) -> StoreFileCopy.Report {
        try NoFollow.refuseLinks(sqlite: destination, place: .backup)
        let partial = destination + ".partial"
        let leftovers = [partial, partial + "-wal", partial + "-shm", partial + "-journal"]
        for leftover in leftovers {
            try? FileManager.default.removeItem(atPath: leftover)  // a link is removed, not followed
        }
        let report: StoreFileCopy.Report
        do {
            report = try await copyFiles(to: partial, mode: mode)
            try NoFollow.refuseLinks(sqlite: partial, place: .backup)
            let target = try DatabaseQueue(path: partial)
            try await target.writeWithoutTransaction { copy in
                try copy.execute(sql: "PRAGMA journal_mode = DELETE")
                let problems = try String.fetchAll(copy, sql: "PRAGMA quick_check")
                guard problems == ["ok"] else { throw StoreError.corrupt(path: partial, problems: problems) }
            }
            try target.close()
            // Gone with the switch to DELETE; one that stays is removed by the next backup.
            for leftover in leftovers.dropFirst() { try? FileManager.default.removeItem(atPath: leftover) }
        } catch {
            // Cleanup: the copy's error is the one thrown.
            for leftover in leftovers { try? FileManager.default.removeItem(atPath: leftover) }
            throw StoreError.wrap(error, path: destination)
        }
        try FileSync.sync(partial)
        try NoFollow.refuseLink(destination, place: .backup)
        guard rename(partial, destination) == 0 else {
            throw StoreError.io(path: destination, operation: "rename", errno: errno)
        }
        try FileSync.sync((destination as NSString).deletingLastPathComponent)
        return report
    }

    /// The database file and its WAL copied to `partial` and `partial-wal`, created here without
    /// following a link and with `mode` (SQLite keeps the mode of an existing file).
    private func copyFiles(to partial: String, mode: mode_t) async throws(StoreError) -> StoreFileCopy.Report {
        let main = try NoFollow.open(partial, flags: O_RDWR | O_CREAT | O_EXCL, mode: mode, place: .backup)
        defer { Glibc.close(main) }
        let wal = try NoFollow.open(partial + "-wal", flags: O_RDWR | O_CREAT | O_EXCL, mode: mode, place: .backup)
        defer { Glibc.close(wal) }
        fchmod(main, mode)  // whatever the umask
        fchmod(wal, mode)
        let path = self.path
        // No checkpoint of the live store first: it would write and fsync the WAL's pages into
        // the store on the reset's path; the copy's own switch to rollback-journal mode does
        // that work on the copy.
        return try await withPool { pool in
            try await pool.writeWithoutTransaction { db in
                var report = StoreFileCopy.Report()
                try db.inTransaction(.immediate) {
                    report.add(try StoreFileCopy.copy(db, .database, path: path, to: main, named: partial))
                    report.add(try StoreFileCopy.copy(db, .wal, path: path + "-wal", to: wal, named: partial + "-wal"))
                    return .rollback
                }
                return report
            }
        }
    }

    /// The problems `PRAGMA integrity_check` reports; empty when the store is sound.
    package func integrityCheck() async throws(StoreError) -> [String] {
        let problems = try await read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return problems == ["ok"] ? [] : problems
    }

    /// `PRAGMA integrity_check` of any SQLite file (e.g. a backup); empty when it is sound.
    package static func integrityCheck(ofFileAt path: String, place: StoreFilePlace = .backup) throws(StoreError) -> [String] {
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
