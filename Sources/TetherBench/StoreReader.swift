import Foundation
import GRDB
import TetherTestSupport

/// A connection of the benchmark to a store (or any SQLite file), as an application would
/// open one: for writing single rows and for watching rows arrive.
package final class StoreReader: Sendable {
    package let path: String
    let queue: DatabaseQueue

    package init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.label = "tether-bench"
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    /// `PRAGMA data_version`: changes whenever another connection commits to the file.
    package func dataVersion() throws -> Int {
        try queue.read { try Int.fetchOne($0, sql: "PRAGMA data_version") ?? 0 }
    }

    package func count(where condition: String = "1") throws -> Int {
        try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM orders WHERE \(condition)") ?? 0 }
    }

    package func contains(id: String) throws -> Bool {
        try queue.read { try Bool.fetchOne($0, sql: "SELECT 1 FROM orders WHERE id = ?", arguments: [id]) ?? false }
    }

    /// One application commit of one statement.
    package func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
        try queue.write { try $0.execute(sql: sql, arguments: arguments) }
    }

    /// Waits until `SELECT count(*) … WHERE condition` reaches `expected`, polling every `interval`.
    package func waitForCount(
        _ expected: Int, where condition: String = "1", timeout: Duration = .seconds(600), interval: Duration = .milliseconds(10)
    ) async throws {
        var lastVersion = -1
        try await eventually("\(expected) rows in \(path)", timeout: timeout, pollInterval: interval) {
            let version = try self.dataVersion()
            guard version != lastVersion else { return false }
            lastVersion = version
            return try self.count(where: condition) >= expected
        }
    }
}
