import Logging
import PostgresNIO

/// Leases on client files (error 108 across instances). Each instance holds the advisory lock
/// (``PostgresServerStorage/instanceLockClass``, ``PostgresNotifier/holderKey``) on its LISTEN
/// connection for as long as it runs; a lease whose holder's lock is gone (the instance died or
/// lost its connection) is free, so a device that fails over to another instance binds at once.
extension PostgresNotifier {
    package func acquire(clientFile: Int64) async throws -> Bool {
        try await storage.acquireLease(clientFile: clientFile, instance: sender, holderKey: holderKey)
    }

    package func release(clientFiles: [Int64]) async {
        do {
            try await storage.releaseLeases(clientFiles: clientFiles, instance: sender)
        } catch {
            logger.warning("cannot release client file leases", metadata: ["error": "\(error)"])
        }
    }
}

extension PostgresServerStorage {
    func acquireLease(clientFile: Int64, instance: String, holderKey: Int32) async throws -> Bool {
        try await withStorageErrors {
            try await client.withConnection { connection in
                for try await _ in try await connection.guardedExecute(
                    PostgresHotSQL.AcquireLease.self, clientFile, instance, holderKey, Self.instanceLockClass, logger: logger)
                {
                    return true
                }
                return false
            }
        }
    }

    func releaseLeases(clientFiles: [Int64], instance: String) async throws {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await connection.guardedQuery(
                    "DELETE FROM client_file_leases WHERE client_file = ANY(\(clientFiles)::bigint[]) AND instance = \(instance)",
                    logger: logger)
            }
        }
    }

    /// Marks this instance alive on `connection` for as long as it stays open.
    func holdInstanceLock(_ holderKey: Int32, on connection: PostgresConnection) async throws {
        try await withStorageErrors {
            try await connection.guardedQuery("SELECT pg_advisory_lock(\(Self.instanceLockClass), \(holderKey))", logger: logger)
        }
    }
}
