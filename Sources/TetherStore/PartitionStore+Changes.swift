import Foundation
import GRDB
import TetherProtocol

extension PartitionStore {
    /// The next batch to upload: the local changes with `seq > after` (at most `limit` log
    /// entries and about `maxBytes` of values), collapsed per row and read straight into their
    /// wire form (``UploadBatchReader``), read after `after` — so the server must take it whole or not
    /// at all (docs/store.md) — or nil when there is none. Acknowledging its `lastSeq` drops all
    /// of it; reading does not remove anything.
    package func pendingChanges(
        after seq: Int64, limit: Int = 1000, maxBytes: Int = PartitionStore.uploadBatchBytes
    ) async throws(StoreError) -> UploadChangeset? {
        let limit = max(limit, 1)
        let schema = self.schema
        return try await read { db in
            guard let batch = try UploadBatchReader.read(db, schema: schema, after: seq, limit: limit, maxBytes: maxBytes) else { return nil }
            return UploadChangeset(afterSeq: seq, firstSeq: batch.first, lastSeq: batch.last, changes: batch.changes)
        }
    }

    /// About how many bytes of values one upload batch carries at most (the entry that reaches
    /// it is the last of its batch): the server's download batches are sized alike
    /// (`ProtocolLimits.targetBatchBytes`), and no batch nears the 16 MiB message limit
    /// whatever the rows hold.
    package static let uploadBatchBytes = ProtocolLimits.targetBatchBytes

    /// Every pending local change, in seq order, uncollapsed, with the rows' values now (what a
    /// client reset recovers). An insert or update of a row that no longer exists is left out.
    package func allPendingChanges() async throws(StoreError) -> [LoggedChange] {
        let schema = self.schema
        return try await read { db in try ChangeLog.read(db, schema: schema, after: 0, limit: Int.max)?.changes ?? [] }
    }

    /// The pending changes recorded in another store file, e.g. the backup taken at the start
    /// of a client reset, with that file's rows' values. The file is opened read-only.
    package static func pendingChanges(ofStoreAt path: String) throws(StoreError) -> [LoggedChange] {
        try readStoreFile(at: path) { db in
            let schema = try MetaTable.recordedSchema(db, path: path)
            return try ChangeLog.read(db, schema: schema, after: 0, limit: Int.max)?.changes ?? []
        }
    }

    /// The metadata and the number of pending log entries of another store file, in one
    /// read-only open (a store the agent has not opened yet, e.g. of a partition paused since
    /// the daemon started), or nil when there is no store there. A store an earlier release
    /// wrote and this one has not converted yet is counted in its own log.
    package static func syncFigures(ofStoreAt path: String) throws(StoreError) -> (metadata: StoreMetadata, pending: Int)? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try readStoreFile(at: path) { db in
            guard let metadata = try MetaTable.fetch(db) else { return nil }
            let log = try db.tableExists("_tether_log") ? "_tether_log" : "_tether_changes"
            return (metadata, try Int.fetchOne(db, sql: "SELECT count(*) FROM \(log)") ?? 0)
        }
    }

    /// The number of pending (not yet integrated) log entries.
    package func pendingChangeCount() async throws(StoreError) -> Int {
        try await read { db in try ChangeLog.count(db) }
    }

    /// The highest local seq ever assigned (0 before the first captured change).
    package func lastAssignedSeq() async throws(StoreError) -> Int64 {
        try await read { db in try ChangeLog.lastAssignedSeq(db) }
    }

    /// Drops the changes with `seq <= seq` (the server integrated them) and records the seq.
    /// Returns the number of log entries dropped.
    @discardableResult
    package func acknowledge(throughSeq seq: Int64) async throws(StoreError) -> Int {
        try await write { db in
            let dropped = try ChangeLog.trim(db, through: seq)
            try MetaTable.raiseIntegratedSeq(db, to: seq)
            return dropped
        }
    }

    /// Collapses, among the changes with `seq > after`, each row's changes into one entry, so a
    /// store offline for long uploads only the net effect. `after` must be at least the highest
    /// seq ever handed to the server (changes already uploaded must not move). Returns the
    /// number of log entries removed.
    @discardableResult
    package func collapsePendingChanges(after seq: Int64) async throws(StoreError) -> Int {
        try await write { db in try ChangeLog.collapse(db, after: seq) }
    }

    static func readOnlyConfiguration() -> Configuration {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(busyTimeout)
        return config
    }

    /// Runs `body` in one read of the SQLite file at `path`, opened read-only for it and closed
    /// after (a backup, a staging copy, a store the agent has not opened); errors name the file.
    static func readFile<T>(at path: String, place: StoreFilePlace = .store, _ body: (Database) throws -> T) throws(StoreError) -> T {
        try NoFollow.refuseLinks(sqlite: path, place: place)
        do {
            let queue = try DatabaseQueue(path: path, configuration: readOnlyConfiguration())
            defer { try? queue.close() }  // read only: nothing to lose
            return try queue.read(body)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    /// ``readFile(at:_:)`` of a Tether store: `notAStore` when the file has no `_tether_meta`.
    static func readStoreFile<T>(at path: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        try readFile(at: path) { db in
            guard try MetaTable.exists(db) else { throw StoreError.notAStore(path: path) }
            return try body(db)
        }
    }
}
