import Foundation
import Logging
import PostgresNIO
import Testing
import TetherProtocol
import TetherTestSupport
import TetherTestTraits
@testable import TetherServer

/// On PostgreSQL every state download holds a connection of its own: an instance reads at most
/// `max_state_downloads` at once, and the others wait for one to end instead of failing for
/// want of a connection (a bind storm after a restore).
@Suite(.postgresCluster) struct StateDownloadLimitTests {
    let partition = PartitionName("limited-17")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func downloadsBeyondTheLimitWaitForOneToEnd() async throws {
        try await withStorage(maximumStateDownloads: 2) { storage, group in
            _ = try await storage.registerClientFile(in: partition, now: now)
            let first = try await storage.openState(of: partition)
            let second = try await storage.openState(of: partition)
            #expect(storage.downloadSlots.inUse == 2)
            let third = AwaitableState<(any StateReader)?>(nil)
            group.addTask {
                let reader = try await storage.openState(of: partition)
                third.update { $0 = reader }
            }
            try await eventually("the third download waits") { storage.downloadSlots.waitingCount == 1 }
            #expect(third.value == nil)
            // The first download ends: the third starts on its slot and reads the state.
            await first.close()
            let started = try await eventually("the third download starts") { third.value }
            #expect(started.version == second.version)
            #expect(try await started.next(maxRows: 10, maxBytes: 1 << 20).isEmpty)
            await second.close()
            await started.close()
            #expect(storage.downloadSlots.inUse == 0 && storage.downloadSlots.waitingCount == 0)
        }
    }

    @Test func aReaderDroppedWithoutClosingGivesItsSlotBack() async throws {
        try await withStorage(maximumStateDownloads: 1) { storage, _ in
            do {
                let dropped = try await storage.openState(of: partition)
                #expect(storage.downloadSlots.inUse == 1)
                _ = dropped
            }
            try await eventually("the slot is back") { storage.downloadSlots.inUse == 0 }
            let next = try await storage.openState(of: partition)
            await next.close()
        }
    }

    /// A download's connection is kept for the next one (no backend started and authenticated
    /// per bind in a storm), at most one per slot; one PostgreSQL ended meanwhile is replaced.
    @Test func aDownloadConnectionIsKeptForTheNextDownload() async throws {
        try await withStorage(maximumStateDownloads: 2) { storage, _ in
            _ = try await storage.registerClientFile(in: partition, now: now)
            let backends = { () async throws -> Int64 in
                try await storage.transaction { connection in
                    var count: Int64 = 0
                    for try await n in try await connection.guardedQuery(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
                        logger: storage.logger
                    ).decode(Int64.self) { count = n }
                    return count
                }
            }
            let first = try await storage.openState(of: partition)
            await first.close()
            #expect(storage.idleDownloadConnections.count == 1)
            let pid = { (reader: any StateReader) async throws -> Int32 in
                try await #require(reader as? PostgresStateReader).backendPID
            }
            let second = try await storage.openState(of: partition)
            #expect(storage.idleDownloadConnections.count == 0, "taken by the second download")
            let reused = try await pid(second)
            let third = try await storage.openState(of: partition)  // a second slot: a new connection
            #expect(try await pid(third) != reused)
            await second.close()
            await third.close()
            #expect(storage.idleDownloadConnections.count == 2, "never more than the slots")
            let before = try await backends()
            for _ in 0..<5 {
                let reader = try await storage.openState(of: partition)
                await reader.close()
            }
            #expect(try await backends() == before, "five downloads, no new backend")
            // PostgreSQL ends the kept connections: the next download opens a new one.
            try await storage.transaction { connection in
                try await connection.guardedQuery(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle' AND backend_type = 'client backend' AND query NOT LIKE 'LISTEN%'",
                    logger: storage.logger)
            }
            let after = try await storage.openState(of: partition)
            #expect(after.version == first.version)
            await after.close()
        }
    }

    /// A storage on the suite's PostgreSQL with `maximumStateDownloads` slots, running for
    /// `body`; `body`'s group may hold more tasks (cancelled at the end).
    func withStorage(
        maximumStateDownloads: Int, _ body: (PostgresServerStorage, inout ThrowingTaskGroup<Void, any Error>) async throws -> Void
    ) async throws {
        let place = try await StoragePlace.make(.postgresql)
        defer { place.remove() }
        let storage = try PostgresServerStorage(
            location: try #require(place.location), password: place.password, maximumConnections: 4,
            maximumStateDownloads: maximumStateDownloads, logger: Logger(label: "tether.test.storage"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await storage.run() }
            defer { group.cancelAll() }
            try await storage.migrate()
            try await body(storage, &group)
        }
    }
}
