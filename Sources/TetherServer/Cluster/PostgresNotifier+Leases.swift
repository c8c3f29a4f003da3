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
                let rows = try await connection.guardedQuery(
                    """
                    INSERT INTO client_file_leases(client_file, instance, holder_key) VALUES (\(clientFile), \(instance), \(holderKey))
                    ON CONFLICT (client_file) DO UPDATE SET instance = excluded.instance, holder_key = excluded.holder_key, taken_at = now()
                    WHERE client_file_leases.instance = excluded.instance OR NOT EXISTS (
                        SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                            AND l.classid = \(Self.instanceLockClass)::oid AND l.objid = client_file_leases.holder_key::oid)
                    RETURNING client_file
                    """, logger: logger)
                for try await _ in rows.decode(Int64.self) { return true }
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
