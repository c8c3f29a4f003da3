import Foundation
import GRDB
import TetherProtocol

/// `tether-server restore-backup --from FILE --data-dir DIR`: replaces a stopped server's
/// database with a backup made by `admin backup`. The previous database is kept next to it
/// as `server.sqlite.before-restore-<time>`.
package enum BackupRestorer {
    package enum Failure: Error, CustomStringConvertible {
        /// The backup file is missing or not a Tether server database (a usage error).
        case badBackup(String)
        /// The data directory is in use or cannot be written.
        case runtime(String)

        package var description: String {
            switch self {
            case .badBackup(let message), .runtime(let message): message
            }
        }
    }

    package struct Summary: Sendable {
        package var partitions: Int
        package var previousDatabase: String?
        /// The records written for the partitions whose history the restore lost (the previous
        /// database was past the backup), in `mode`.
        package var heals: [HealRecord] = []
    }

    /// `mode`: whether devices give the lost history back (``RestoreMode/heal``) or it stays
    /// lost (``RestoreMode/rollback``); either way a record says what was lost.
    package static func restore(from backup: String, dataDirectory: String, now: Date = Date(), mode: RestoreMode = .heal) throws -> Summary {
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
        var heals: [HealRecord] = []
        do {
            let partial = database + ".restoring"
            for leftover in [partial, partial + "-wal", partial + "-shm"] {
                try? manager.removeItem(atPath: leftover)  // a leftover of an interrupted restore, usually absent
            }
            try manager.copyItem(atPath: backup, toPath: partial)
            let previousHeads: [String: PreviousHistory]
            if manager.fileExists(atPath: database) {
                // Fold the WAL into the old database before reading it and moving it aside.
                try DatabaseQueue(path: database).writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
                previousHeads = try histories(of: database)
            } else {
                previousHeads = [:]
            }
            heals = try prepare(partial, previous: previousHeads, mode: mode, now: now)
            if manager.fileExists(atPath: database) {
                let stamp = ISO8601DateFormatter().string(from: now).replacingOccurrences(of: ":", with: "")
                previous = database + ".before-restore-" + stamp
                try manager.moveItem(atPath: database, toPath: previous!)
            }
            for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: database + suffix) {
                try manager.removeItem(atPath: database + suffix)
            }
            try manager.moveItem(atPath: partial, toPath: database)
        } catch {
            throw Failure.runtime("--data-dir: cannot restore into \(dataDirectory): \(error)")
        }
        return Summary(partitions: partitions, previousDatabase: previous, heals: heals)
    }

    /// What the database being replaced held of a partition: its latest version, the salts of
    /// its retained history, and the versions earlier restores of it lost (`restored_away`).
    struct PreviousHistory {
        var head: Int64
        var salts: [Int64: Int64] = [:]
        var restoredAway: [(version: Int64, salt: Int64)] = []
    }

    /// Every partition's latest version in the database at `path`, with the salts of its
    /// retained history and the versions its earlier restores lost.
    static func histories(of path: String) throws -> [String: PreviousHistory] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }  // read only: nothing to lose
        return try queue.read { db in
            var partitions: [String: PreviousHistory] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, latest_version FROM partitions") {
                partitions[row["name"]] = PreviousHistory(head: row["latest_version"])
            }
            for row in try Row.fetchAll(db, sql: "SELECT p.name, h.version, h.salt FROM history h JOIN partitions p ON p.id = h.partition_id") {
                partitions[row["name"]]?.salts[row["version"]] = row["salt"]
            }
            // A database last opened by a server before the table existed has none.
            if try db.tableExists("restored_away") {
                for row in try Row.fetchAll(
                    db, sql: "SELECT p.name, r.version, r.salt FROM restored_away r JOIN partitions p ON p.id = r.partition_id")
                {
                    partitions[row["name"]]?.restoredAway.append((row["version"], row["salt"]))
                }
            }
            return partitions
        }
    }

    /// Brings the copy at `path` to the current layout and records, for each partition the
    /// `previous` database was past, the window the restore loses (its versions after the
    /// backup's head, with the salts the previous history held).
    static func prepare(
        _ path: String, previous: [String: PreviousHistory], mode: RestoreMode, now: Date
    ) throws -> [HealRecord] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }  // the writes committed; closing only releases the file
        try SQLiteServerStorage.migrator.migrate(queue)
        return try queue.write { db in
            var records: [HealRecord] = []
            for (name, lost) in previous.sorted(by: { $0.key < $1.key }) {
                guard let partition = PartitionName(name) else { continue }
                let existing = try SQLiteServerStorage.partitionRow(partition, db)
                // What the replaced database's earlier restores lost stays known (``HealDetection``).
                if let existing { try SQLiteServerStorage.keepRestoredAway(lost.restoredAway, partitionID: existing.id, db) }
                let restoredTo = existing?.head.latest.version ?? 0
                guard lost.head > restoredTo else { continue }
                // A partition created after the backup was taken comes back empty, its whole history lost.
                let p = try existing ?? SQLiteServerStorage.createPartitionIfNeeded(partition, now: now, db)
                if existing == nil { try SQLiteServerStorage.keepRestoredAway(lost.restoredAway, partitionID: p.id, db) }
                let window = LostWindow(restoredTo: restoredTo, lostUntil: lost.head, salts: lost.salts.filter { $0.key > restoredTo })
                let record = HealPlan.record(partition, window: window, mode: mode, origin: .backupRestore, now: now)
                try SQLiteServerStorage.write(record, salts: window.salts, partitionID: p.id, db)
                records.append(record)
            }
            return records
        }
    }

    /// Opens the backup read-only and checks it is an intact Tether server database.
    static func check(_ path: String) throws -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }  // read only: nothing to lose
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
