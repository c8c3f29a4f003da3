import Foundation
import Logging
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
