import Foundation
import GRDB
import GRDBSQLite

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
    ///
    /// On SQLite's own interface, not GRDB's: a probe runs for every watched store after each
    /// file event (the settle re-checks), and GRDB's setup of a connection (its serial queue,
    /// authorizer, schema introspection for `tableExists`) cost more than the read itself;
    /// an idle agent's CPU went mostly there (BENCHMARKS.md, issue 50).
    static func read(path: String) throws -> Fingerprint {
        try NoFollow.refuseLinks(sqlite: path, place: .store)
        var handle: OpaquePointer? = nil
        defer { sqlite3_close_v2(handle) }
        var code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let db = handle else { throw Failure(code: code, handle: handle) }
        sqlite3_busy_timeout(db, Int32(busyTimeout * 1000))
        // One read transaction: both reads see the same commit.
        code = sqlite3_exec(db, "BEGIN", nil, nil, nil)
        guard code == SQLITE_OK else { throw Failure(code: code, handle: db) }
        defer { sqlite3_exec(db, "COMMIT", nil, nil, nil) }
        let present = try rows(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_tether_meta'").first?.first
        guard let present, let count = Int64.fromDatabaseValue(present), count > 0 else { return nil }
        let seq = try rows(db, ChangeLog.lastAssignedSeqSQL).first?.first ?? .null
        let meta = try rows(db, "SELECT * FROM _tether_meta WHERE id = 1").first ?? []
        return [seq] + meta
    }

    /// The rows of `sql` (at most a few) as values.
    private static func rows(_ db: OpaquePointer, _ sql: String) throws -> [[DatabaseValue]] {
        var statement: OpaquePointer? = nil
        defer { sqlite3_finalize(statement) }
        var code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw Failure(code: code, handle: db) }
        var result: [[DatabaseValue]] = []
        while true {
            code = sqlite3_step(statement)
            guard code == SQLITE_ROW else { break }
            result.append((0..<sqlite3_column_count(statement)).map { DatabaseValue(sqliteStatement: statement, index: $0) })
        }
        guard code == SQLITE_DONE else { throw Failure(code: code, handle: db) }
        return result
    }

    /// A probe that could not read (the watcher then wakes the reader, which meets the real error).
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var message: String

        init(code: Int32, handle: OpaquePointer?) {
            self.code = code
            message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        }

        var description: String { "SQLite error \(code): \(message)" }
    }
}
