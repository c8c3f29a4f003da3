import CTetherShims
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// Copies a store's database file or WAL as a file, through the descriptor SQLite holds for
/// it (`tether_sqlite_copy_file`): never by opening the store again, because closing any
/// descriptor of the file drops every POSIX lock the process holds on it — SQLite's included —
/// and an application closing its connection next would take itself for the last one,
/// checkpoint and delete the WAL the agent still writes to.
package enum StoreFileCopy {
    enum File: Int32 {
        case database = 0
        case wal = 1
    }

    /// How a file was copied (for the log and the benchmark).
    package enum Method: Int32, Sendable, Comparable {
        case nothing = 0
        case reflink = 1
        case copyFileRange = 2
        case sqliteReads = 3

        package var name: String {
            switch self {
            case .nothing: "nothing"
            case .reflink: "reflink"
            case .copyFileRange: "copy_file_range"
            case .sqliteReads: "SQLite reads"
            }
        }

        package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// How a store's files were copied: the slowest method one of them needed, and the bytes.
    package struct Report: Sendable, Hashable {
        package var method: Method = .nothing
        package var bytes: Int64 = 0

        mutating func add(_ copy: (method: Method, bytes: Int64)) {
            method = max(method, copy.method)
            bytes += copy.bytes
        }
    }

    /// Copies the whole `file` of the connection `db` (whose path is `path`) to the empty file
    /// open as `destination` (named `name` in errors). The caller holds the write lock.
    @discardableResult
    static func copy(_ db: Database, _ file: File, path: String, to destination: Int32, named name: String) throws(StoreError)
        -> (method: Method, bytes: Int64)
    {
        var copied: Int64 = 0
        let result = tether_sqlite_copy_file(UnsafeMutableRawPointer(db.sqliteConnection), file.rawValue, path, destination, &copied)
        if result <= -1000 {
            let code = -(result + 1000)
            throw .sqlite(path: path, code: code, message: "reading the file to copy it to \(name)")
        }
        if result < 0 { throw .io(path: name, operation: "copy", errno: -result) }
        return (Method(rawValue: result) ?? .nothing, copied)
    }
}
