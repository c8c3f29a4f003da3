import Foundation
import Logging
import Testing
import TetherServer
import TetherTestSupport
import TetherTestTraits

/// The storage backends every conformance test runs against.
enum StorageBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    var testDescription: String { rawValue }
}

/// One place a test's storage lives (a directory, or a database of the suite's PostgreSQL),
/// opened as often as the test asks: two instances open at once share it, as two servers would.
struct StoragePlace: Sendable {
    let backend: StorageBackend
    let directory: String
    let location: PostgresLocation?
    let password: Secret?

    static func make(_ backend: StorageBackend) async throws -> StoragePlace {
        let directory = NSTemporaryDirectory() + "tether-storage-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        switch backend {
        case .sqlite:
            return StoragePlace(backend: backend, directory: directory, location: nil, password: nil)
        case .postgresql:
            let cluster = try TestPostgres.current()
            let database = try await cluster.createDatabase()
            let location = PostgresLocation(host: cluster.host, port: cluster.port, user: cluster.user, database: database, tls: .disable)
            return StoragePlace(backend: backend, directory: directory, location: location, password: Secret(cluster.password))
        }
    }

    /// Opens an instance of the storage for `body`, and closes it afterwards.
    func withInstance<T: Sendable>(_ body: @Sendable (any ServerStorage) async throws -> T) async throws -> T {
        switch backend {
        case .sqlite:
            let storage = try SQLiteServerStorage(directory: directory)
            do {
                let result = try await body(storage)
                try await storage.close()
                return result
            } catch {
                try? await storage.close()
                throw error
            }
        case .postgresql:
            let storage = try PostgresServerStorage(
                location: location!, password: password, maximumConnections: 4, logger: Logger(label: "tether.test.storage"))
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await storage.run() }
                defer { group.cancelAll() }
                try await storage.migrate()
                return try await body(storage)
            }
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Runs `body` with a fresh storage of `backend`.
func withStorage(
    _ backend: StorageBackend, _ body: @Sendable (any ServerStorage, StoragePlace) async throws -> Void
) async throws {
    let place = try await StoragePlace.make(backend)
    defer { place.remove() }
    try await place.withInstance { storage in try await body(storage, place) }
}
