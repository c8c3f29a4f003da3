import Foundation
import TetherTestSupport

/// The applications' side of the benchmark, played by the `sqlite3` CLI: SQL scripts of known
/// size, plain SQLite files for the floors, and timed runs.
package enum SQLWorkload {
    package static let sqlite3 = "/usr/bin/sqlite3"

    /// The `orders` table as a plain SQLite table (no triggers, no Tether tables): the floor's file.
    package static let plainTable = "CREATE TABLE orders (id TEXT PRIMARY KEY NOT NULL, customer TEXT NOT NULL, total REAL NOT NULL, note TEXT);"

    /// Inserts rows `first ..< first + count` in `transactions` transactions (~100 bytes a row:
    /// 1,000,000 rows are about 100 MB of row data). Keys are `<prefix>-<9 digits>`.
    package static func insertScript(prefix: String, first: Int = 0, count: Int, transactions: Int) -> String {
        let perTransaction = max(1, count / max(1, transactions))
        var script = ""
        var start = first
        let end = first + count
        while start < end {
            let n = min(perTransaction, end - start)
            script += """
                BEGIN;
                WITH RECURSIVE c(i) AS (SELECT \(start) UNION ALL SELECT i + 1 FROM c WHERE i < \(start + n - 1))
                INSERT INTO orders (id, customer, total, note)
                SELECT printf('\(prefix)-%09d', i), printf('customer %07d', i % 1000000), i * 0.25,
                       printf('note for order %09d: two pallets, deliver before noon', i) FROM c;
                COMMIT;

                """
            start += n
        }
        return script
    }

    /// Changes one field (`total`) of every `stride`-th row, `count` rows, in one transaction.
    package static func updateScript(prefix: String, count: Int, stride: Int, total: Double) -> String {
        """
        BEGIN;
        WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < \(count - 1))
        UPDATE orders SET total = \(total) WHERE id IN (SELECT printf('\(prefix)-%09d', i * \(stride)) FROM c);
        COMMIT;
        """
    }

    /// Runs `script` with `sqlite3` on `database`; returns the wall time in seconds.
    @discardableResult
    package static func run(_ database: String, _ script: String, timeout: Duration = .seconds(900)) async throws -> Double {
        let file = database + ".bench-script.sql"
        try script.write(toFile: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }  // cleanup: a script left behind is only litter
        let clock = ContinuousClock()
        let started = clock.now
        let result = try await ChildProcess.run(sqlite3, ["-bail", "-cmd", ".timeout 60000", database, ".read \(file)"], timeout: timeout)
        let elapsed = started.duration(to: clock.now)
        guard result.succeeded else { throw TestSupportError("sqlite3 \(database) failed: \(result)") }
        return elapsed.seconds
    }

    /// One query's output, trimmed.
    package static func query(_ database: String, _ sql: String) async throws -> String {
        let result = try await ChildProcess.run(sqlite3, ["-cmd", ".timeout 60000", database, sql], timeout: .seconds(600))
        guard result.succeeded else { throw TestSupportError("sqlite3 \(database) failed: \(result)") }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package static func count(_ database: String, where condition: String = "1") async throws -> Int {
        Int(try await query(database, "SELECT count(*) FROM orders WHERE \(condition)")) ?? -1
    }

    /// A new plain SQLite file in WAL mode (like a store) with the `orders` table.
    package static func makePlainFile(_ path: String) async throws {
        removeDatabase(path)
        try await run(path, "PRAGMA journal_mode = WAL;\n" + plainTable)
    }

    /// `sqlite3 SOURCE ".backup DEST"` (SQLite's online backup API); the wall time in seconds.
    package static func backup(_ source: String, to destination: String) async throws -> Double {
        removeDatabase(destination)
        let clock = ContinuousClock()
        let started = clock.now
        let result = try await ChildProcess.run(sqlite3, [source, ".backup '\(destination)'"], timeout: .seconds(900))
        guard result.succeeded else { throw TestSupportError("sqlite3 .backup \(source) failed: \(result)") }
        return started.duration(to: clock.now).seconds
    }

    package static func removeDatabase(_ path: String) {
        // Scratch files, usually absent: one that stays fails the sqlite3 run that uses the path.
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    package var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
