import Foundation
import TetherTestSupport
import TetherTestTraits
#if canImport(Glibc)
import Glibc
#endif

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
