import Foundation
import Logging
import NIOCore
import PostgresNIO
import TetherProtocol

/// Reads one partition's state from a `REPEATABLE READ` transaction on a connection of its
/// own, held for the whole download: every chunk comes from the same version while uploads
/// commit on other connections and instances. ``close()`` ends it and keeps the connection for
/// the next download (``IdleDownloadConnections``); dropping the reader closes the connection.
/// Either gives the instance's download slot back.
actor PostgresStateReader: StateReader {
    nonisolated let version: ServerVersion
    nonisolated let totalRows: Int64
    nonisolated let totalBytes: Int64
    nonisolated let exactTables: Set<String>
    let connection: PostgresConnection
    private let partitionID: Int64?
    private let slots: DownloadSlots
    private let idle: IdleDownloadConnections
    let logger: Logger
    private var after: (table: String, key: ByteBuffer)? = nil
    var done = false
    private var closed = false
    /// The tables (and of each, the rows) to read; nil: the whole partition in one key order.
    var selection: [(table: String, rows: StateSelection.Table)]? = nil
    var selected = SelectionCursor()

    private init(
        version: ServerVersion, totalRows: Int64, totalBytes: Int64, connection: PostgresConnection, partitionID: Int64?,
        slots: DownloadSlots, idle: IdleDownloadConnections, logger: Logger, exactTables: Set<String> = []
    ) {
        self.exactTables = exactTables
        self.version = version
        self.totalRows = totalRows
        self.totalBytes = totalBytes
        self.connection = connection
        self.partitionID = partitionID
        self.slots = slots
        self.idle = idle
        self.logger = logger
    }

    /// Opens the reader on a slot the caller acquired from `slots` (the reader releases it), on a
    /// connection an earlier download left open when there is one (one PostgreSQL ended
    /// meanwhile fails its `BEGIN`: a new one is opened then).
    /// `purpose`: read only the rows it needs (``StateSelection``); nil: every row.
    static func open(
        _ storage: PostgresServerStorage, partition: PartitionName, slots: DownloadSlots, purpose: StateSelection.Purpose? = nil
    ) async throws -> PostgresStateReader {
        if let kept = await storage.idleDownloadConnections.take() {
            // One PostgreSQL ended meanwhile fails its BEGIN and is closed: a new one is opened below.
            if (try? await begin(kept, storage)) != nil {
                return try await read(partition, connection: kept, storage: storage, slots: slots, purpose: purpose)
            }
        }
        let connection = try await storage.connect()
        try await begin(connection, storage)
        return try await read(partition, connection: connection, storage: storage, slots: slots, purpose: purpose)
    }

    /// Begins the download's transaction on `connection`; closes it when that fails.
    private static func begin(_ connection: PostgresConnection, _ storage: PostgresServerStorage) async throws {
        do {
            try await storage.withStorageErrors {
                try await connection.guardedQuery("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: storage.logger)
            }
        } catch {
            try? await connection.close()  // cleanup: the BEGIN's error is the one reported
            throw error
        }
    }

    /// The partition's head and totals, read in the transaction begun on `connection`.
    private static func read(
        _ partition: PartitionName, connection: PostgresConnection, storage: PostgresServerStorage, slots: DownloadSlots,
        purpose: StateSelection.Purpose?
    ) async throws -> PostgresStateReader {
        let logger = storage.logger
        do {
            return try await storage.withStorageErrors {
                guard let p = try await PostgresServerStorage.partitionRow(partition, connection, logger) else {
                    return PostgresStateReader(
                        version: .none, totalRows: 0, totalBytes: 0, connection: connection, partitionID: nil, slots: slots,
                        idle: storage.idleDownloadConnections, logger: logger)
                }
                var selection: StateSelection? = nil
                if let purpose {
                    selection = StateSelection(purpose, indexed: try await PostgresServerStorage.filterIndexColumns(connection, logger).indexed)
                }
                // A change's read reports no progress; a filtered state counts the rows it selects
                // (what the device's disk must hold), not the partition's.
                var totals: (Int64, Int64) = (0, 0)
                if let ordered = selection?.ordered {
                    if purpose?.isChange != true {
                        totals = try await PostgresServerStorage.totals(of: ordered, partitionID: p.id, connection, logger)
                    }
                } else {
                    for try await row in try await connection.guardedExecute(PostgresHotSQL.StateTotals.self, p.id, logger: logger) {
                        totals = try row.decode((Int64, Int64).self)
                    }
                }
                let reader = PostgresStateReader(
                    version: p.head.latest, totalRows: totals.0, totalBytes: totals.1, connection: connection, partitionID: p.id,
                    slots: slots, idle: storage.idleDownloadConnections, logger: logger,
                    exactTables: StateSelection.exactTables(of: selection?.ordered))
                if let selection { await reader.select(selection) }
                return reader
            }
        } catch {
            try? await connection.close()  // cleanup: the read's error is the one reported
            throw error
        }
    }

    /// The PostgreSQL backend serving this download (tests: a kept connection is the same one).
    var backendPID: Int32 {
        get async throws {
            for try await pid in try await connection.guardedQuery("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) { return pid }
            return 0
        }
    }

    func nextStored(maxRows: Int, maxBytes: Int) async throws -> [StoredStateRow] {
        guard let partitionID, !done, !closed else { return [] }
        if let selection { return try await next(selection, partitionID: partitionID, maxRows: maxRows, maxBytes: maxBytes) }
        let limit = Int64(maxRows)
        let rows = if let after {
            try await connection.guardedExecute(PostgresHotSQL.StateNextRows.self, partitionID, after.table, after.key, limit, logger: logger)
        } else {
            try await connection.guardedExecute(PostgresHotSQL.StateFirstRows.self, partitionID, limit, logger: logger)
        }
        var changes: [StoredStateRow] = []
        var bytes = 0
        var full = false
        for try await row in rows {
            let (table, keyBytes, fieldBytes) = try row.decode((String, ByteBuffer, ByteBuffer).self)
            if full { continue }
            changes.append(StoredStateRow(table: table, key: keyBytes.bytes, fields: fieldBytes.bytes))
            bytes += keyBytes.readableBytes + fieldBytes.readableBytes
            after = (table, keyBytes)
            if bytes >= maxBytes { full = true }
        }
        if changes.isEmpty { done = true }
        return changes
    }

    func close() async {
        guard !closed else { return }
        closed = true
        // Read only: ending it is cleanup. A connection whose transaction ended cleanly is kept
        // for the next download; any other is closed.
        if (try? await connection.guardedQuery("COMMIT", logger: logger)) != nil {
            await idle.give(connection)
        } else {
            try? await connection.close()  // read only, and dropped either way: nothing to lose
        }
        slots.release()
    }

    deinit {
        if !closed {
            // The connection must outlive its close (PostgresNIO asserts on a connection
            // dropped before it closed): the completion keeps it until then.
            let connection = self.connection
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
            slots.release()
        }
    }
}
