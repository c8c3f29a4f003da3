import Glibc
import TetherProtocol

/// The check a state download makes before it writes each chunk (docs/operations.md "Disk
/// space for state downloads"): a server can make a device download a state of any size, and a
/// full disk would stop every application writing beside the stores.
///
/// The server announces the whole state's size with every chunk (`bytes_total` of
/// ``DownloadProgress``, the rows' encoded size). What the rest of the download still needs —
/// the announced size less what was written already, at least the chunk at hand, or just the
/// chunk when nothing is announced — plus a quarter for SQLite's own overhead, plus a reserve
/// kept free for everything else (``reserve``, or a twentieth of a smaller file system), must
/// be free on each file system the state is written to: the staging store's and the store's.
struct DiskSpaceCheck: Sendable {
    /// Bytes kept free beyond what the download needs, at most.
    static let reserve: Int64 = 32 << 20

    /// The bytes an unprivileged writer may still use on the file system holding `path`; nil
    /// when that cannot be found out (the check then passes: it must not stop a download by
    /// its own failure).
    var freeBytes: @Sendable (String) -> Int64?
    /// The size of the file system holding `path`; nil when unknown (the whole ``reserve``).
    var capacityBytes: @Sendable (String) -> Int64? = { _ in nil }

    /// `statvfs(2)`, unless `TETHER_FAULT_FREE_BYTES` claims a number (tests).
    static let live: DiskSpaceCheck = {
        guard let claimed = FaultInjection.freeBytes else {
            return DiskSpaceCheck(freeBytes: statvfsFreeBytes, capacityBytes: statvfsCapacityBytes)
        }
        return DiskSpaceCheck(freeBytes: { _ in claimed })
    }()

    /// `f_blocks × f_frsize`.
    @Sendable static func statvfsCapacityBytes(_ path: String) -> Int64? { statvfsBytes(path) { $0.f_blocks } }

    /// The reserve on a file system of `capacity` bytes: 32 MiB, or a twentieth of a file
    /// system smaller than 640 MiB (a small disk must still take a small state).
    static func reserve(capacity: Int64?) -> Int64 {
        guard let capacity else { return reserve }
        return min(reserve, max(capacity / 20, 0))
    }

    /// `f_bavail × f_frsize`: what is free for users other than root (the agent's user).
    @Sendable static func statvfsFreeBytes(_ path: String) -> Int64? { statvfsBytes(path) { $0.f_bavail } }

    /// `blocks(statvfs(path)) × f_frsize`, at most `Int64.max`; nil when `statvfs` fails.
    private static func statvfsBytes(_ path: String, _ blocks: (statvfs) -> fsblkcnt_t) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let bytes = UInt64(blocks(info)).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        return bytes.overflow ? Int64.max : Int64(clamping: bytes.partialValue)
    }

    /// The bytes the rest of a download needs free: see the type's description.
    static func needed(announcedTotal: Int64, written: Int64, chunk: Int64, reserve: Int64 = reserve) -> Int64 {
        let remaining = announcedTotal > 0 ? max(announcedTotal - written, chunk) : chunk
        let clamped = max(remaining, 0)
        let (withOverhead, overflow) = clamped.addingReportingOverflow(clamped / 4)
        return overflow ? Int64.max : withOverhead.addingReportingOverflow(reserve).overflow ? Int64.max : withOverhead + reserve
    }

    /// Throws when one of `directories` has less free space than the rest of the download
    /// needs. `progress` is the chunk's (its `bytesTotal` the announced size), `written` the
    /// bytes of the chunks written before it, `chunk` this chunk's bytes.
    func check(directories: [String], progress: DownloadProgress, written: Int64, chunk: Int64) throws(DiskSpaceError) {
        var seen: Set<String> = []
        for directory in directories where seen.insert(directory).inserted {
            guard let free = freeBytes(directory) else { continue }
            let needed = Self.needed(
                announcedTotal: progress.bytesTotal, written: written, chunk: chunk,
                reserve: Self.reserve(capacity: capacityBytes(directory)))
            if free < needed { throw DiskSpaceError(path: directory, needed: needed, free: free) }
        }
    }
}
