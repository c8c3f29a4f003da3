import Foundation
import Glibc

extension PartitionStore {
    /// Puts a complete staging store in place as a brand-new store at `path` without writing
    /// its rows a second time: the staging file (closed, its WAL checkpointed away) is synced,
    /// given mode 0660, linked at `path` — never replacing a file already there — and the
    /// directory synced; then the staging name goes. A crash at any point leaves either no
    /// store at `path` or the complete one (the staging store was marked complete before).
    ///
    /// Returns false, changing nothing at `path`, when that cannot be done: a file is already
    /// there (an application created it), `path` is on another file system, or the staging
    /// store's journal is not empty (its WAL not checkpointed, a `-journal` left). The caller then writes the store
    /// the long way, into the file that is there. A symbolic link at either path (or beside
    /// them) is never followed: false, and the long way then refuses it with an error.
    package static func installWithoutCopy(staging: String, at path: String) -> Bool {
        let fileManager = FileManager.default
        // A link, or a path that cannot be checked: false; the long way refuses it and says why.
        guard (try? NoFollow.refuseLinks(sqlite: staging, place: .staging)) != nil,
            (try? NoFollow.refuseLinks(sqlite: path, place: .store)) != nil,
            fileManager.fileExists(atPath: staging), !fileManager.fileExists(atPath: path),
            size(of: staging + "-wal") == 0, !fileManager.fileExists(atPath: staging + "-journal")
        else { return false }
        // Cannot be opened: false; the long way opens it too and says why.
        guard let fd = try? NoFollow.open(staging, flags: O_RDWR, place: .staging) else { return false }
        fchmod(fd, 0o660)
        let synced = fsync(fd) == 0
        Glibc.close(fd)
        guard synced, link(staging, path) == 0 else { return false }
        syncDirectory(of: path)
        for companion in ["-wal", "-shm"] { unlink(staging + companion) }
        unlink(staging)
        syncDirectory(of: staging)
        return true
    }

    /// The size of the file at `path`; 0 when there is none.
    private static func size(of path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    private static func syncDirectory(of path: String) {
        let fd = Glibc.open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }
}
