import Foundation
import Glibc

/// The agent never follows a symbolic link in its own directories (stores, backups, staging
/// files, quarantine, the state database): someone who may write into such a directory (a store
/// directory is writable by the applications' group) could otherwise make the agent open,
/// chmod or overwrite a file elsewhere with its own rights.
///
/// Plain files are opened with `O_NOFOLLOW` and changed through the descriptor (`fchmod`).
/// SQLite files are checked with `lstat` just before SQLite opens them, with their `-wal`,
/// `-shm` and `-journal` companions: GRDB does not pass `SQLITE_OPEN_NOFOLLOW` (its open flags
/// are internal), so a link planted between the check and the open is not caught there — the
/// writers this guards against are refused at every later open and chmod, which go through
/// descriptors.
package enum NoFollow {
    static let companions = ["", "-wal", "-shm", "-journal"]

    /// Throws ``StoreError/symbolicLink(path:place:)`` when `path` is a symbolic link; a
    /// missing path, or any other kind of file, is fine.
    package static func refuseLink(_ path: String, place: StoreFilePlace) throws(StoreError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFLNK { throw .symbolicLink(path: path, place: place.rawValue) }
    }

    /// ``refuseLink(_:place:)`` for the SQLite file at `path` and its companions.
    package static func refuseLinks(sqlite path: String, place: StoreFilePlace) throws(StoreError) {
        for suffix in companions { try refuseLink(path + suffix, place: place) }
    }

    /// True when `path` is a symbolic link (lstat).
    package static func isLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    /// `open(2)` with `O_NOFOLLOW | O_CLOEXEC` added: a symbolic link at `path` throws
    /// ``StoreError/symbolicLink(path:place:)``, other failures ``StoreError/io(path:operation:errno:)``.
    package static func open(_ path: String, flags: Int32, mode: mode_t = 0, place: StoreFilePlace) throws(StoreError) -> Int32 {
        let fd = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP || isLink(path) { throw .symbolicLink(path: path, place: place.rawValue) }
            throw .io(path: path, operation: "open", errno: code)
        }
        return fd
    }

    /// Makes the SQLite file at `path` ready for SQLite to open: refuses a symbolic link at it
    /// or at a companion (``refuseLinks(sqlite:place:)``), creates it when missing without
    /// following a link, and sets `mode` through the descriptor (the agent's own databases:
    /// the state database, the event journal).
    package static func createSQLiteFile(_ path: String, mode: mode_t, place: StoreFilePlace) throws(StoreError) {
        try refuseLinks(sqlite: path, place: place)
        let fd = try open(path, flags: O_RDWR | O_CREAT, mode: mode, place: place)
        fchmod(fd, mode)
        Glibc.close(fd)
    }

    /// Sets the mode of the file at `path` through a descriptor opened without following a
    /// link (never `chmod(path)`).
    package static func setMode(_ path: String, _ mode: mode_t, place: StoreFilePlace) throws(StoreError) {
        let fd = try open(path, flags: O_RDONLY | O_NONBLOCK, place: place)  // a FIFO must not block
        defer { Glibc.close(fd) }
        guard fchmod(fd, mode) == 0 else { throw .io(path: path, operation: "fchmod", errno: errno) }
    }
}
