import TetherProtocol

/// A state download was refused before it filled the disk: `path`'s file system has `free`
/// bytes, the rest of the download needs `needed` (docs/operations.md "Disk space for state
/// downloads"). Transient: the download is tried again with backoff, and the store is kept as
/// it is meanwhile.
struct DiskSpaceError: Error, Sendable, Hashable, CustomStringConvertible {
    var path: String
    var needed: Int64
    var free: Int64

    var isTransient: Bool { true }

    var description: String {
        "not enough free space for the server's state in \(path): \(needed) bytes needed (the announced size, a quarter more and up to \(DiskSpaceCheck.reserve) bytes kept free), \(free) bytes free"
    }

    var hint: String {
        "free space on the file system of \(path) (or move state_dir or the store to a larger one); the download is tried again with backoff, the store is not changed meanwhile"
    }

    /// As the partition's last error shows it (retried, like the download).
    var shownAsSyncError: SyncError { SyncError(.otherSessionError, "\(self)", action: .retry) }
}
