import Foundation
import GRDB

/// `tether-server restore-backup --from FILE --data-dir DIR`: replaces a stopped server's
/// database with a backup made by `admin backup`. The previous database is kept next to it
/// as `server.sqlite.before-restore-<time>`.
public enum BackupRestorer {
    public enum Failure: Error, CustomStringConvertible {
        /// The backup file is missing or not a Tether server database (a usage error).
        case badBackup(String)
        /// The data directory is in use or cannot be written.
        case runtime(String)

        public var description: String {
            switch self {
            case .badBackup(let message), .runtime(let message): message
            }
        }
    }

    public struct Summary: Sendable {
        public var partitions: Int
        public var previousDatabase: String?
    }

    public static func restore(from backup: String, dataDirectory: String, now: Date = Date()) throws -> Summary {
        guard FileManager.default.isReadableFile(atPath: backup) else {
            throw Failure.badBackup("--from: cannot read \(backup)")
        }
        let partitions = try check(backup)
        let lock: DataDirectoryLock
        do {
            lock = try DataDirectoryLock(directory: dataDirectory)
        } catch {
            throw Failure.runtime("--data-dir: \(error) — stop the server first")
        }
        defer { withExtendedLifetime(lock) {} }
        let database = (dataDirectory as NSString).appendingPathComponent(SQLiteServerStorage.fileName)
        let manager = FileManager.default
        var previous: String? = nil
        do {
            if manager.fileExists(atPath: database) {
                let stamp = ISO8601DateFormatter().string(from: now).replacingOccurrences(of: ":", with: "")
                previous = database + ".before-restore-" + stamp
                // Fold the WAL into the old database before moving it aside.
                try DatabaseQueue(path: database).writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
                try manager.moveItem(atPath: database, toPath: previous!)
            }
            for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: database + suffix) {
                try manager.removeItem(atPath: database + suffix)
            }
            let partial = database + ".restoring"
            try? manager.removeItem(atPath: partial)  // a leftover of an interrupted restore, usually absent
            try manager.copyItem(atPath: backup, toPath: partial)
            try manager.moveItem(atPath: partial, toPath: database)
        } catch {
            throw Failure.runtime("--data-dir: cannot restore into \(dataDirectory): \(error)")
        }
        return Summary(partitions: partitions, previousDatabase: previous)
    }

    /// Opens the backup read-only and checks it is an intact Tether server database.
    static func check(_ path: String) throws -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                guard try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok" else {
                    throw Failure.badBackup("--from: \(path) fails SQLite's integrity check")
                }
                guard try db.tableExists("partitions"), try db.tableExists("history") else {
                    throw Failure.badBackup("--from: \(path) is not a tether-server backup")
                }
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM partitions") ?? 0
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure.badBackup("--from: \(path) is not a tether-server backup: \(error)")
        }
    }
}
