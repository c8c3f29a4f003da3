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

        let actions = Mutex<[RemoteAction]>([])

        var hooks: AgentConnection.Hooks {
            AgentConnection.Hooks(
                ready: { self.ready.withLock { $0 += 1 } }, whileConnected: { _ in self.connections.withLock { $0 += 1 } },
                answer: { action in
                    self.actions.withLock { $0.append(action) }
                    return RemoteActionResult(id: action.id, outcome: .done, message: "ran \(action.kind)")
                })
        }
    }

    /// Runs the connection of a registry for `url` while `body` watches it.
    func withConnection(
        url: String, backoff: Backoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(200)),
        enrollmentKey: String? = nil, _ body: (PartitionRegistry, AgentConnection, Seen) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { dir in
            if let enrollmentKey { chmod(try dir.write("enroll.key", enrollmentKey), 0o600) }
            let registry = try PartitionRegistryTests.registry(
                dir, partitions: ["a"], url: url, backoff: backoff, token: enrollmentKey == nil ? "t0ken\n" : nil,
                serverKeys: enrollmentKey == nil ? "" : "enrollment_key_file = \"\(dir.appending("enroll.key"))\"")
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
        let refusing = try LoopbackPort.refusing()
        defer { refusing.close() }
        try await withConnection(url: refusing.syncURL) { registry, connection, seen in
            try await eventually("two refused attempts", timeout: .seconds(120)) { syncErrors(registry).count >= 2 }
            #expect(syncErrors(registry).allSatisfy { $0.name == "connection_refused" && $0.action == "transient" && $0.code == nil })
            #expect(seen.ready.withLock { $0 } == 1, "READY=1 once, after the first attempt")
            #expect(seen.connections.withLock { $0 } == 0)
            #expect(await connection.current == nil)
            #expect(await connection.isMakingProgress(limit: .seconds(30), serverURL: ""))
        }
    }

    /// Remote actions (protocol 8): each action the server sends is run by the hook and its
    /// result sent back as `action-result`.
    @Test func aRemoteActionIsRunAndAnsweredOnTheConnection() async throws {
        let welcome = FakeSyncServer.frame(0x2, FakeSyncServer.welcome(protocolVersion: UInt8(TetherVersion.syncProtocol)))
        let actions = [RemoteAction(id: 41, kind: .diagnostics), RemoteAction(id: 42, kind: .pause, partition: "a")]
        let sent = welcome + actions.flatMap { FakeSyncServer.frame(0x2, ServerMessage.action($0).encoded()) }
        let answers = Mutex<[RemoteActionResult]>([])
        let fake = try FakeSyncServer(
            .init(
                bytes: { sent }, closeAfter: false,
                reply: { payload in
                    if case .actionResult(let result)? = try? ClientMessage.decode(payload) { answers.withLock { $0.append(result) } }
                    return []
                }))
        defer { fake.stop() }
        try await withConnection(url: fake.url) { _, connection, seen in
            try await eventually("both answered", timeout: .seconds(120)) { answers.withLock { $0.count } == 2 }
            #expect(seen.actions.withLock { $0 } == actions, "run in the order sent")
            #expect(answers.withLock { $0 } == [
                RemoteActionResult(id: 41, outcome: .done, message: "ran diagnostics"),
                RemoteActionResult(id: 42, outcome: .done, message: "ran pause"),
            ])
            #expect(await connection.current != nil)
        }
    }

    @Test func aConnectionTheServerClosesIsASyncErrorAndIsRetried() async throws {
        let welcome = FakeSyncServer.frame(0x2, FakeSyncServer.welcome(protocolVersion: UInt8(TetherVersion.syncProtocol)))
        let fake = try FakeSyncServer(.init(bytes: { welcome }, closeAfter: false))
        try await withConnection(url: fake.url) { registry, connection, seen in
            try await eventually("connected", timeout: .seconds(120)) { await connection.current != nil }
            try await eventually("the device reports run", timeout: .seconds(120)) { seen.connections.withLock { $0 } == 1 }
            #expect(seen.ready.withLock { $0 } == 1, "READY=1 once the partitions run")
            #expect(syncErrors(registry).isEmpty)
            fake.stop()
            try await eventually("the cut is a sync error", timeout: .seconds(120)) { syncErrors(registry).contains { $0.name == "connection_closed" } }
            try await eventually("retried", timeout: .seconds(120)) { syncErrors(registry).contains { $0.name == "connection_refused" } }
            #expect(await connection.current == nil)
            #expect(seen.ready.withLock { $0 } == 1)
        }
    }

    /// (Closing a connection to the fake server waits for a close frame it never sends, so the
    /// connected case of a reload is played by the machine's tests and the end-to-end suites.)
    @Test func aReloadThatChangesTheServerEndsTheBackoff() async throws {
        let refusing = try LoopbackPort.refusing()
        defer { refusing.close() }
        let url = refusing.syncURL
        try await withConnection(url: url, backoff: Backoff(initial: .seconds(600), maximum: .seconds(600))) { registry, connection, _ in
            try await eventually("the first attempt refused", timeout: .seconds(120)) { syncErrors(registry).count == 1 }
            try await eventually("backing off", timeout: .seconds(120)) {
                if case .backingOff = await connection.phase { return true }
                return false
            }
            await connection.reloaded(serverChanged: false)
            #expect(syncErrors(registry).count == 1, "an unchanged server does not end the backoff")
            await connection.reloaded(serverChanged: true)
            try await eventually("attempted anew at once", timeout: .seconds(120)) { syncErrors(registry).count == 2 }
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

    // MARK: Enrollment (issue 48)

    /// The token file's path of a registry made by ``withConnection(url:backoff:enrollmentKey:_:)``.
    func tokenFile(_ registry: PartitionRegistry) async -> String { await registry.configuration().server.tokenFile }

    @Test func withoutATokenTheAgentEnrollsWritesTheCredentialThenConnects() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let key = server.addKey(tags: ["store": "17"])
        // The fake serves no /sync: after enrolling, the attempts are refused upgrades.
        try await withConnection(url: server.syncURL, enrollmentKey: key) { registry, connection, seen in
            let path = await tokenFile(registry)
            try await eventually("enrolled", timeout: .seconds(120)) { TokenFile.inspect(path) != .missing }
            let deviceID = try registry.stateDatabase.deviceID()
            #expect(TokenFile.inspect(path) == .credential(deviceID: deviceID))
            #expect(server.devices[deviceID]?.tags == ["store": "17"])
            try await eventually("then it connects", timeout: .seconds(120)) { syncErrors(registry).contains { $0.name == "upgrade_failed" } }
            #expect(server.devices[deviceID]?.enrollments == 1, "a credential of this device is used, not enrolled again")
            #expect(seen.ready.withLock { $0 } == 1)
        }
    }

    @Test func aRefusedKeyIsLoggedOnceAndWaitsForAReload() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        try await withConnection(url: server.syncURL, enrollmentKey: "tek1.0123456789abcdef.\(String(repeating: "A", count: 43))") {
            registry, connection, seen in
            try await eventually("stopped", timeout: .seconds(120)) {
                if case .enrollmentStopped(let error) = await connection.phase { return error.code == "unknown_key" }
                return false
            }
            let refusals = syncErrors(registry).filter { $0.name == "enrollment_unknown_key" }
            #expect(refusals.count == 1 && refusals.first?.action == "fatal")
            #expect(server.requestCount == 1, "no attempt while stopped")
            #expect(seen.ready.withLock { $0 } == 1, "READY=1: the service is up, waiting")
            #expect(TokenFile.inspect(await tokenFile(registry)) == .missing)
            await connection.reloaded(serverChanged: false)
            try await eventually("a reload enrolls again", timeout: .seconds(120)) { server.requestCount == 2 }
        }
    }

    @Test func transientRefusalsAreRetriedWithTheBackoff() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let key = server.addKey()
        server.script([.refusal(.unavailable), .refusal(.unavailable), .refusal(.rateLimited, retryAfter: 0)])
        try await withConnection(url: server.syncURL, enrollmentKey: key) { registry, _, _ in
            let path = await tokenFile(registry)
            try await eventually("enrolled after three refusals", timeout: .seconds(120)) { TokenFile.inspect(path) != .missing }
            #expect(server.requestCount == 4)
            #expect(syncErrors(registry).compactMap(\.name).filter { $0.hasPrefix("enrollment_") } == ["enrollment_unavailable", "enrollment_rate_limited"], "a repeat is not announced again")
        }
    }

    @Test func aClonedCredentialEnrollsAgainAsThisDevice() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let key = server.addKey()
        try await withConnection(url: server.syncURL, backoff: Backoff(initial: .seconds(600), maximum: .seconds(600)), enrollmentKey: key) {
            registry, connection, _ in
            let path = await tokenFile(registry)
            try await eventually("enrolled", timeout: .seconds(120)) { TokenFile.inspect(path) != .missing }
            let me = try registry.stateDatabase.deviceID()
            let golden = String(repeating: "0f", count: 16)
            try CredentialWriter.write("tdc1.\(golden).\(String(repeating: "g", count: 43))", to: path)
            // The next attempt (a reload ends the backoff) finds another device's credential.
            await connection.reloaded(serverChanged: true)
            try await eventually("enrolled again", timeout: .seconds(120)) { server.devices[me]?.enrollments == 2 }
            try await eventually("its own credential", timeout: .seconds(120)) { TokenFile.inspect(path) == .credential(deviceID: me) }
        }
    }
}
