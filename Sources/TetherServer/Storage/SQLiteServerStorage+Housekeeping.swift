import Foundation
import GRDB

extension SQLiteServerStorage {
    package func latestVersions() async throws -> [String: Int64] {
        try await pool.read { db in
            var versions: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, latest_version FROM partitions") {
                versions[row["name"]] = row["latest_version"]
            }
            return versions
        }
    }

    package func expireClientFiles(lastSeenBefore cutoff: Date, bound: [Int64], now: Date) async throws -> Int {
        try await pool.write { db in
            for id in bound {
                try db.execute(sql: "UPDATE client_files SET last_seen = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, id])
            }
            try db.execute(sql: "DELETE FROM client_files WHERE last_seen < ?", arguments: [cutoff.timeIntervalSince1970])
            return db.changesCount
        }
    }
}
