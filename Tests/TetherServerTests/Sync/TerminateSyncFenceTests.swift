import Foundation
import Logging
import PostgresNIO
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// Terminate-sync run by one instance fences the sessions of every other instance sharing the
/// PostgreSQL database, before its notification reaches them: uploads and history reads of a
/// session bound before it are refused by the epoch, also for a client file registered by a
/// bind that raced the command (after the client files were forgotten), and a bind that read
/// stale flags is refused once registered. SQLite has one process: the instance that
/// terminates ends its own sessions itself (see ``StorageConformanceTests``).
@Suite(.postgresCluster) struct TerminateSyncFenceTests {
    let partition = PartitionName("fenced-17")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func upload(_ seq: Int64, _ key: Int64) -> [UploadChangeset] {
        [UploadChangeset(firstSeq: seq, lastSeq: seq, changeset: Changeset([.insert("t", .integer(key), [:])]))]
    }

    @Test func terminateSyncOnOneInstanceFencesUploadsAndDownloadsOnAnother() async throws {
        try await withStorage(.postgresql) { storage, place in
            let (a, _) = try await storage.registerClientFile(in: partition, now: now)
            let bound = try await storage.epoch(of: partition)
            _ = try await storage.integrate(upload(1, 1), from: a.id, into: partition, now: now, epoch: bound)
            // The other instance terminates sync, and an operator enables it again at once.
            try await place.withInstance { other in
                #expect(try await other.terminateSync() == 1)
                var flags = try await other.flags()
                flags.syncTerminated = false
                try await other.setFlags(flags)
            }
            // A bind on this instance that read the epoch before the command and registered its
            // client file after it (its flags were stale): the client file exists, the epoch fences it.
            let (late, _) = try await storage.registerClientFile(in: partition, now: now)
            await #expect(throws: StorageError.self) {
                _ = try await storage.integrate(upload(1, 2), from: late.id, into: partition, now: now, epoch: bound)
            }
            await #expect(throws: StorageError.self) {
                _ = try await storage.history(of: partition, after: 0, maxEntries: 10, maxBytes: 1 << 20, epoch: bound)
            }
            #expect(try await storage.head(of: partition)?.latest.version == 1)
            // A session bound after the command goes on.
            let after = try await storage.epoch(of: partition)
            #expect(after > bound)
            let outcome = try await storage.integrate(upload(1, 2), from: late.id, into: partition, now: now, epoch: after)
            #expect(outcome.accepted == 1)
        }
    }

    /// An instance stalled in the middle of an upload (frozen with its partition locks held)
    /// does not hold up terminate-sync on another instance for ever: PostgreSQL ends the
    /// stalled transaction (`idle_in_transaction_session_timeout`) and the command goes on.
    /// When the stalled instance wakes, its next statement fails at once instead of waiting for
    /// ever on the closed connection (PostgresNIO loses a query written to one).
    /// Found by the fault campaign: `freeze-server` of one instance, then `terminate-sync`.
    @Test(.timeLimit(.minutes(2))) func aStalledInstancesLocksDoNotHoldTerminateSync() async throws {
        try await withStorage(.postgresql) { storage, place in
            let stalledInstance = try #require(storage as? PostgresServerStorage)
            _ = try await storage.registerClientFile(in: partition, now: now)
            let steps = AsyncStream.makeStream(of: String.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await stalledInstance.transaction { connection in
                            try await connection.guardedQuery("SELECT id FROM partitions ORDER BY id FOR UPDATE", logger: stalledInstance.logger)
                            steps.continuation.yield("locked")
                            // Frozen mid-transaction for longer than PostgreSQL lets it idle.
                            try await Task.sleep(for: PostgresServerStorage.stalledTransactionLimit + .seconds(5))
                            try await connection.guardedQuery("SELECT 1", logger: stalledInstance.logger)
                        }
                        steps.continuation.yield("committed")
                    } catch {
                        steps.continuation.yield("failed")
                    }
                    steps.continuation.finish()
                }
                var step = steps.stream.makeAsyncIterator()
                let locked = await step.next()
                try #require(locked == "locked", "the stalled transaction did not take the locks")
                let started = ContinuousClock.now
                try await place.withInstance { other in _ = try await other.terminateSync() }
                #expect(ContinuousClock.now - started < .seconds(60), "terminate-sync waited for the stalled instance")
                // The stalled instance wakes to a closed connection: its statement fails, it does not hang.
                let woken = await step.next()
                #expect(woken == "failed")
            }
        }
    }

    /// An instance whose flags lag (the notification has not arrived) refuses a bind once
    /// terminate-sync committed on another instance.
    @Test func aBindWithStaleFlagsIsRefusedAfterTerminateSyncOnAnotherInstance() async throws {
        try await withStorage(.postgresql) { storage, place in
            let hub = SyncHub()
            let service = SyncService(
                storage: StorageRoles(storage), hub: hub, policy: Self.policy(), bus: AcceptingBus(), now: { Date() },
                logger: Logger(label: "test"))
            let request = BindRequest(session: 1, partition: partition.rawValue, token: "device-token", identity: nil)
            let before = await service.bind(request, key: SessionKey(connection: 1, session: 1), fail: { _ in })
            guard case .accepted = before else {
                Issue.record("bind before terminate-sync refused: \(before)")
                return
            }
            try await place.withInstance { other in _ = try await other.terminateSync() }
            #expect(await service.policy.snapshot.flags.syncTerminated == false)
            let outcome = await service.bind(request, key: SessionKey(connection: 2, session: 1), fail: { _ in })
            guard case .rejected(let error) = outcome else {
                Issue.record("a bind after terminate-sync on another instance was accepted")
                return
            }
            #expect(error.message.contains("sync is terminated"))
            #expect(await service.hub.bound().map(\.key.connection) == [1])
        }
    }

    static func policy() -> ServerPolicy {
        let grant = ServerConfiguration.Grant(user: "device", patterns: [try! GrantPattern.parse("*").get()], access: .readwrite)
        return ServerPolicy(
            users: UserDirectory(entries: [(name: "device", token: "device-token")]), adminToken: TokenDigest(token: "admin"),
            configuredGrants: [grant], runtimeGrants: [], flags: ServerFlags(), configuredRecovery: true,
            schemas: SchemaRegistry(history: [SchemaRecord(schema: Schema(version: 1, tables: []), isBreaking: false, appliedAt: Date())]))
    }
}

/// A cluster bus that announces nothing and grants every lease (one instance's view).
private struct AcceptingBus: ClusterBus {
    func announce(_ event: ClusterEvent) async {}
    func acquire(clientFile: Int64) async throws -> Bool { true }
    func release(clientFiles: [Int64]) async {}
}
