import Foundation
import Testing
import TetherTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL server of a suite run under ``PostgresClusterTrait`` (one per suite; each
/// test makes its own database).
enum TestPostgres {
    @TaskLocal static var cluster: PostgresCluster?

    static func current() throws -> PostgresCluster {
        guard let cluster else { throw ServerFailure("this suite needs the .postgresCluster trait") }
        return cluster
    }
}

/// Starts a real PostgreSQL 15 for a suite and stops it afterwards (never skipped).
struct PostgresClusterTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let cluster = try await PostgresCluster.start()
        do {
            try await TestPostgres.$cluster.withValue(cluster) { try await function() }
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }
}

extension Trait where Self == PostgresClusterTrait {
    static var postgresCluster: Self { PostgresClusterTrait() }
}

/// A fresh database of the suite's PostgreSQL and the `[storage]` table that names it, with the
/// password in a file of its own (mode 600), as a deployment has it.
struct PostgresDatabase: Sendable {
    let cluster: PostgresCluster
    let name: String
    let directory: String

    static func make() async throws -> PostgresDatabase {
        let cluster = try TestPostgres.current()
        let name = try await cluster.createDatabase()
        let directory = NSTemporaryDirectory() + "tether-pg-config-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let database = PostgresDatabase(cluster: cluster, name: name, directory: directory)
        try database.writePassword(cluster.password, to: database.passwordFile)
        return database
    }

    var passwordFile: String { directory + "/pg.password" }

    func writePassword(_ password: String, to path: String) throws {
        try (password + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
    }

    /// The `[storage]` table for the server's config (appended after the root keys).
    func storageTable(port: Int? = nil, passwordFile: String? = nil) -> String {
        """

        [storage]
        kind = "postgresql"
        url = "postgresql://\(cluster.user)@127.0.0.1:\(port ?? cluster.port)/\(name)?sslmode=disable"
        password_file = "\(passwordFile ?? self.passwordFile)"

        """
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
