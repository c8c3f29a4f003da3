import Foundation
import GRDB
import TetherProtocol
import TetherStore

/// `state_dir/state.sqlite`: what the agent must remember across restarts — partition
/// status (paused, stopped, last error) and every client reset with its phase and backup
/// path, and the subscriptions set at run time (``RuntimeSubscriptions``). Writes are durable (`synchronous = FULL`) because a reset's phase must be on disk
/// before the phase's side effect starts.
package final class AgentStateDatabase: Sendable {
    private let queue: DatabaseQueue
    package let path: String

    /// A symbolic link at `path` (or beside it: `-wal`, `-shm`, `-journal`) is refused with
    /// ``AgentStateError/symbolicLink(path:)``, never followed; the file gets mode 0640 through
    /// a descriptor (no `chmod(path)`).
    package init(path: String) throws(AgentStateError) {
        self.path = path
        do {
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            var configuration = Configuration()
            configuration.journalMode = .wal
            configuration.busyMode = .timeout(5)
            configuration.label = "tether.state"
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            // Created here without following a link (O_NOFOLLOW; SQLite then opens the file that is there).
            try NoFollow.createSQLiteFile(path, mode: 0o640, place: .stateDatabase)
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try Self.migrator.migrate(queue)
        } catch StoreError.symbolicLink(let link, _) {
            throw .symbolicLink(path: link)
        } catch {
            throw AgentStateError.cannotOpen(path: path, reason: "\(error)")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: partitions and resets") { db in
            try db.create(table: "partition") { t in
                t.primaryKey("name", .text)
                t.column("paused", .boolean).notNull().defaults(to: false)
                t.column("stoppedReason", .text)
                t.column("lastErrorCode", .integer)
                t.column("lastErrorMessage", .text)
                t.column("lastErrorAt", .double)
            }
            try db.create(table: "reset") { t in
                t.primaryKey("id", .text)
                t.column("partition", .text).notNull().indexed()
                t.column("phase", .text).notNull()
                t.column("startedAt", .double).notNull()
                t.column("record", .blob).notNull()  // ResetRecord as JSON
            }
        }
        // The app-specific machine id tetherd last ran with (``MachineIdentity``).
        migrator.registerMigration("v2: machine") { db in
            try db.create(table: "agent") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
        }
        // The subscriptions a partition wants, set at run time (``RuntimeSubscriptions``).
        migrator.registerMigration("v3: runtime subscriptions") { db in
            try db.create(table: "runtime_subscriptions") { t in
                t.primaryKey("partition", .text)
                t.column("subscriptions", .blob).notNull()  // SubscriptionSet.canonicalBytes
                t.column("configuredDigest", .text).notNull()
                t.column("madeAt", .double).notNull()
            }
        }
        return migrator
    }

    // MARK: Machine

    /// The app-specific machine id recorded at the last start (nil: none recorded yet, or
    /// forgotten by `tetherd --forget-identities`).
    package func recordedMachine() throws(AgentStateError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM agent WHERE key = 'machine'") }
    }

    /// The device's id in the server's ledger (32 hex digits), made at the first call and kept
    /// until the machine's identity is forgotten (``recordMachine(_:)`` with nil, or a changed
    /// machine id), so that a cloned image reports as a device of its own.
    package func deviceID() throws(AgentStateError) -> String {
        var id = ""
        try write { db in
            if let kept = try String.fetchOne(db, sql: "SELECT value FROM agent WHERE key = 'device'") {
                id = kept
                return
            }
            var generator = SystemRandomNumberGenerator()
            id = (0..<16).map { _ in
                let byte = UInt8.random(in: 0...255, using: &generator)
                return (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }.joined()
            try db.execute(sql: "INSERT INTO agent (key, value) VALUES ('device', ?)", arguments: [id])
        }
        return id
    }

    /// Records `machine` (nil forgets it). The device id goes with a change of machine.
    package func recordMachine(_ machine: String?) throws(AgentStateError) {
        try write { db in
            let recorded = try String.fetchOne(db, sql: "SELECT value FROM agent WHERE key = 'machine'")
            if recorded != machine { try db.execute(sql: "DELETE FROM agent WHERE key = 'device'") }
            if let machine {
                try db.execute(
                    sql: "INSERT INTO agent (key, value) VALUES ('machine', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    arguments: [machine])
            } else {
                try db.execute(sql: "DELETE FROM agent WHERE key = 'machine'")
            }
        }
    }

    // MARK: Resets

    /// Writes `record` durably; returns once it is on disk.
    package func save(_ record: ResetRecord) throws(AgentStateError) {
        let data: Data
        do { data = try JSONEncoder().encode(record) } catch { throw .corrupt(path: path, reason: "\(error)") }
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO reset (id, partition, phase, startedAt, record) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET phase = excluded.phase, record = excluded.record
                    """,
                arguments: [record.id, record.partition.rawValue, record.phase.rawValue, record.startedAt, data])
        }
    }

    /// Every reset, oldest first; only `partition`'s when given.
    package func resets(partition: PartitionName? = nil) throws(AgentStateError) -> [ResetRecord] {
        let rows: [Data] = try read { db in
            if let partition {
                return try Data.fetchAll(db, sql: "SELECT record FROM reset WHERE partition = ? ORDER BY startedAt, id", arguments: [partition.rawValue])
            }
            return try Data.fetchAll(db, sql: "SELECT record FROM reset ORDER BY startedAt, id")
        }
        return try rows.map { (data) throws(AgentStateError) in try decode(data) }
    }

    /// The reset that holds `partition` now (not done), if any.
    package func activeReset(partition: PartitionName) throws(AgentStateError) -> ResetRecord? {
        let data: Data? = try read { db in
            try Data.fetchOne(
                db, sql: "SELECT record FROM reset WHERE partition = ? AND phase != 'done' ORDER BY startedAt DESC LIMIT 1",
                arguments: [partition.rawValue])
        }
        return try data.map { (data) throws(AgentStateError) in try decode(data) }
    }

    private func decode(_ data: Data) throws(AgentStateError) -> ResetRecord {
        do { return try JSONDecoder().decode(ResetRecord.self, from: data) } catch {
            throw .corrupt(path: path, reason: "a reset record cannot be read: \(error)")
        }
    }

    // MARK: Partitions

    package func status(of partition: PartitionName) throws(AgentStateError) -> PartitionStatusRow {
        let row: Row? = try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM partition WHERE name = ?", arguments: [partition.rawValue])
        }
        guard let row else { return PartitionStatusRow(name: partition) }
        var status = PartitionStatusRow(name: partition, paused: row["paused"], stoppedReason: row["stoppedReason"])
        if let code: Int = row["lastErrorCode"] {
            status.lastError = .init(code: code, message: row["lastErrorMessage"] ?? "", at: row["lastErrorAt"] ?? 0)
        }
        return status
    }

    package func update(_ status: PartitionStatusRow) throws(AgentStateError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO partition (name, paused, stoppedReason, lastErrorCode, lastErrorMessage, lastErrorAt)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(name) DO UPDATE SET paused = excluded.paused, stoppedReason = excluded.stoppedReason,
                        lastErrorCode = excluded.lastErrorCode, lastErrorMessage = excluded.lastErrorMessage,
                        lastErrorAt = excluded.lastErrorAt
                    """,
                arguments: [
                    status.name.rawValue, status.paused, status.stoppedReason, status.lastError?.code,
                    status.lastError?.message, status.lastError?.at,
                ])
        }
    }

    // MARK: Plumbing

    func write(_ body: (Database) throws -> Void) throws(AgentStateError) {
        do { try queue.write(body) } catch { throw AgentStateError.writeFailed(path: path, reason: "\(error)") }
    }

    func read<T>(_ body: (Database) throws -> T) throws(AgentStateError) -> T {
        do { return try queue.read(body) } catch { throw AgentStateError.corrupt(path: path, reason: "\(error)") }
    }
}
