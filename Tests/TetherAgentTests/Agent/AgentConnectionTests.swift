import Foundation
import Synchronization
import Testing
import TetherControl
import TetherProtocol
import TetherSyncClient
import TetherTestSupport
@testable import TetherAgent

/// ``AgentConnection`` in process: the real sync client against a loopback port nobody listens
/// on, or a ``FakeSyncServer`` that answers the upgrade and sends a welcome; one partition
/// (its store is never bound: the fake server ignores binds).
@Suite struct AgentConnectionTests {
    /// What the connection's hooks saw.
    final class Seen: Sendable {
        let ready = Mutex(0)
        let connections = Mutex(0)

        var hooks: AgentConnection.Hooks {
            AgentConnection.Hooks(
                ready: { self.ready.withLock { $0 += 1 } }, whileConnected: { _ in self.connections.withLock { $0 += 1 } })
        }
    }

    /// Runs the connection of a registry for `url` while `body` watches it.
    func withConnection(
        url: String, backoff: Backoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(200)),
        _ body: (PartitionRegistry, AgentConnection, Seen) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { dir in
            let registry = try PartitionRegistryTests.registry(dir, partitions: ["a"], url: url, backoff: backoff)
            await registry.startControllers()
            let seen = Seen()
            let connection = registry.connection
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await connection.run(partitions: registry, hooks: seen.hooks) }
                defer { group.cancelAll() }
                try await body(registry, connection, seen)
            }
        }
    }

    /// The connection's sync errors (not a partition's).
    func syncErrors(_ registry: PartitionRegistry) -> [AgentEvent] {
        registry.events.log.recent().filter { $0.event == .syncError && ($0.partition ?? "").isEmpty }
    }

    @Test func aRefusedAttemptIsNamedByItsTypeSendsReadyAndBacksOff() async throws {
        try await withConnection(url: "ws://127.0.0.1:\(try LoopbackPort.free())/sync") { registry, connection, seen in
            try await eventually("two refused attempts") { syncErrors(registry).count >= 2 }
            #expect(syncErrors(registry).allSatisfy { $0.name == "connection_refused" && $0.action == "transient" && $0.code == nil })
            #expect(seen.ready.withLock { $0 } == 1, "READY=1 once, after the first attempt")
            #expect(seen.connections.withLock { $0 } == 0)
            #expect(await connection.current == nil)
            #expect(await connection.isMakingProgress(limit: .seconds(30), serverURL: ""))
        }
    }

    @Test func aConnectionTheServerClosesIsASyncErrorAndIsRetried() async throws {
        let welcome = FakeSyncServer.frame(0x2, FakeSyncServer.welcome(protocolVersion: UInt8(TetherVersion.syncProtocol)))
        let fake = try FakeSyncServer(.init(bytes: { welcome }, closeAfter: false))
        try await withConnection(url: fake.url) { registry, connection, seen in
            try await eventually("connected") { await connection.current != nil }
            try await eventually("the device reports run") { seen.connections.withLock { $0 } == 1 }
            #expect(seen.ready.withLock { $0 } == 1, "READY=1 once the partitions run")
            #expect(syncErrors(registry).isEmpty)
            fake.stop()
            try await eventually("the cut is a sync error") { syncErrors(registry).contains { $0.name == "connection_closed" } }
            try await eventually("retried") { syncErrors(registry).contains { $0.name == "connection_refused" } }
            #expect(await connection.current == nil)
            #expect(seen.ready.withLock { $0 } == 1)
        }
    }

    /// (Closing a connection to the fake server waits for a close frame it never sends, so the
    /// connected case of a reload is played by the machine's tests and the end-to-end suites.)
    @Test func aReloadThatChangesTheServerEndsTheBackoff() async throws {
        let url = "ws://127.0.0.1:\(try LoopbackPort.free())/sync"
        try await withConnection(url: url, backoff: Backoff(initial: .seconds(600), maximum: .seconds(600))) { registry, connection, _ in
            try await eventually("the first attempt refused") { syncErrors(registry).count == 1 }
            try await eventually("backing off") {
                if case .backingOff = await connection.phase { return true }
                return false
            }
            await connection.reloaded(serverChanged: false)
            #expect(syncErrors(registry).count == 1, "an unchanged server does not end the backoff")
            await connection.reloaded(serverChanged: true)
            try await eventually("attempted anew at once") { syncErrors(registry).count == 2 }
        }
    }

    /// (3 s alone: the close waits for the fake server's close frame, which never comes, for
    /// the dialer's close timeout. The unit phase's 900 tests in parallel made it 38 s once, so
    /// the waits get two minutes: they end as soon as the condition holds.)
    @Test func anotherProtocolVersionStopsUntilAReload() async throws {
        let fake = try FakeSyncServer(.init(bytes: { FakeSyncServer.frame(0x2, FakeSyncServer.welcome(protocolVersion: 99)) }, closeAfter: false))
        defer { fake.stop() }
        try await withConnection(url: fake.url) { registry, connection, seen in
            try await eventually("stopped", timeout: .seconds(120)) {
                if case .stopped(let error) = await connection.phase { return error.code == .wrongProtocolVersion }
                return false
            }
            #expect(syncErrors(registry).contains { $0.code == 105 })
            #expect(fake.connections == 1, "no attempt while stopped")
            #expect(seen.ready.withLock { $0 } == 1)
            await connection.reloaded(serverChanged: false)
            try await eventually("a reload connects again", timeout: .seconds(120)) { fake.connections >= 2 }
        }
    }
}
