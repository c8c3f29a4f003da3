import Foundation
import PostgresNIO

extension PostgresServerStorage {
    package func latestVersions() async throws -> [String: Int64] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                var versions: [String: Int64] = [:]
                let rows = try await connection.guardedQuery("SELECT name, latest_version FROM partitions", logger: logger)
                for try await (name, version) in rows.decode((String, Int64).self) { versions[name] = version }
                return versions
            }
        }
    }

    package func expireClientFiles(lastSeenBefore cutoff: Date, bound: [Int64], now: Date) async throws -> Int {
        try await withStorageErrors {
            try await client.withConnection { connection in
                if !bound.isEmpty {
                    try await connection.guardedQuery(
                        "UPDATE client_files SET last_seen = \(now.timeIntervalSince1970) WHERE id = ANY(\(bound))", logger: logger)
                }
                var removed = 0
                let rows = try await connection.guardedQuery(
                    "WITH gone AS (DELETE FROM client_files WHERE last_seen < \(cutoff.timeIntervalSince1970) RETURNING 1) SELECT count(*) FROM gone",
                    logger: logger)
                for try await count in rows.decode(Int64.self) { removed = Int(count) }
                return removed
            }
        }
    }
}
