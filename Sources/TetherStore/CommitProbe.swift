import Foundation
import GRDB

/// Reads a store's commit fingerprint for the commit watcher (``CommitWatchService``): the last
/// assigned change seq and the `_tether_meta` row. Every captured application change assigns a
/// new seq, and every agent apply, reset or metadata change rewrites the metadata row; a
/// checkpoint, a rolled-back or a content-free transaction changes neither.
///
/// Each read opens a read-only connection, reads in one snapshot and closes it again, so that
/// a watched store costs no connection (no schema, no page cache) between commits. Read-only,
/// the connection can neither create a file where the store is missing nor checkpoint or
/// delete the WAL when it closes (which would raise the file events the watcher listens to).
enum CommitProbe {
    /// What is compared between two reads; nil for a file without `_tether_meta` (not a store).
    typealias Fingerprint = [DatabaseValue]?

    /// How long a read waits for a lock. Short: one watcher thread serves every store, and a
    /// read that gives up is repeated by the re-checks after the event.
    static let busyTimeout: TimeInterval = 0.25

    /// Opens `path`, reads its fingerprint, closes it. Throws when it cannot be read now.
    static func read(path: String) throws -> Fingerprint {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(busyTimeout)
        config.label = "tether.notify"
        try NoFollow.refuseLinks(sqlite: path, place: .store)
        let queue = try DatabaseQueue(path: path, configuration: config)
        defer { try? queue.close() }  // read only: nothing to lose
        return try queue.read(fingerprint)
    }

    static func fingerprint(_ db: Database) throws -> Fingerprint {
        guard try db.tableExists("_tether_meta") else { return nil }
        let meta = try Row.fetchOne(db, sql: "SELECT * FROM _tether_meta WHERE id = 1")
        return [try lastChangeSeq(db)] + (meta.map { Array($0.databaseValues) } ?? [])
    }

    /// The last seq the change log assigned (its AUTOINCREMENT counter), NULL before the first.
    static func lastChangeSeq(_ db: Database) throws -> DatabaseValue {
        try DatabaseValue.fetchOne(db, sql: ChangeLog.lastAssignedSeqSQL) ?? .null
    }
}
