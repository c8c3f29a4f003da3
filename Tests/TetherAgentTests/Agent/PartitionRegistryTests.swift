import Foundation
import Logging
import Synchronization
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// The partitions by name and the context their controllers call back into, without a process
/// and without a server.
@Suite struct PartitionRegistryTests {
    final class Counter: Sendable {
        let count = Mutex(0)
    }

    /// A registry over `partitions` (names) in `dir`, its connection never started.
    static func registry(
        _ dir: TemporaryDirectory, partitions: [String], url: String = "ws://127.0.0.1:1/sync", backoff: Backoff = Backoff(),
        statusChanges: Counter? = nil, token: String? = "t0ken\n", serverKeys: String = ""
    ) throws -> PartitionRegistry {
        if let token {
            let tokenFile = try dir.write("token", token)
            chmod(tokenFile, 0o600)
        }
        let configuration = try configuration(dir, partitions: partitions, url: url, serverKeys: serverKeys)
        let logger = Logger(label: "test")
        let events = AgentEvents()
        return PartitionRegistry(
            configuration: configuration, stateDatabase: try AgentStateDatabase(path: dir.appending("state.db")), logger: logger,
            events: events, connection: AgentConnection(logger: logger, metrics: AgentMetrics(), events: events, backoff: backoff),
            onStatusChange: { statusChanges?.count.withLock { $0 += 1 } })
    }

    static func configuration(
        _ dir: TemporaryDirectory, partitions: [String], url: String = "ws://127.0.0.1:1/sync", serverKeys: String = ""
    ) throws -> AgentConfiguration {
        try AgentConfiguration.parse(
            text: """
                state_dir = "\(dir.path)"
                [server]
                url = "\(url)"
                token_file = "\(dir.appending("token"))"
                \(serverKeys)
                """ + partitions.map { "\n[[partition]]\nname = \"\($0)\"\nstore = \"\(dir.appending($0 + ".db"))\"\n" }.joined(),
            file: dir.appending("tetherd.toml"))
    }

    @Test func startsOneControllerPerPartitionFoundByName() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, partitions: ["b", "a"])
            #expect(await registry.controllers().isEmpty, "none before they start")
            await registry.startControllers()
            let controllers = await registry.controllers()
            #expect(await controllers.asyncMap { await $0.settings.name.rawValue } == ["a", "b"], "by name")
            let a = try #require(await registry.controller(named: PartitionName("a")!))
            #expect(a === controllers[0])
            #expect(await registry.controller(named: PartitionName("c")!) == nil)
            await registry.startControllers()
            #expect(await registry.controller(named: PartitionName("a")!) === a, "started once")
            #expect(await registry.statuses().map(\.name.rawValue) == ["a", "b"])
        }
    }

    @Test func aReloadRemovesKeepsAndAddsPartitions() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, partitions: ["a", "b"])
            await registry.startControllers()
            let a = try #require(await registry.controller(named: PartitionName("a")!))
            let old = await registry.reload(try Self.configuration(dir, partitions: ["a", "c"], url: "ws://127.0.0.1:2/sync"))
            #expect(old.server.url == "ws://127.0.0.1:1/sync", "the configuration it replaced")
            #expect(await registry.configuration().server.url == "ws://127.0.0.1:2/sync")
            #expect(await registry.controller(named: PartitionName("a")!) === a, "a kept partition keeps its controller")
            #expect(await registry.controller(named: PartitionName("b")!) == nil)
            #expect(await registry.controller(named: PartitionName("c")!) != nil)
        }
    }

    @Test func sessionIDsCountUpFromOne() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, partitions: ["a"])
            #expect(await registry.nextSessionID() == 1)
            #expect(await registry.nextSessionID() == 2)
        }
    }

    @Test func theTokenIsReadAnewAndAnEmptyFileIsAnError() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, partitions: ["a"])
            #expect(try await registry.readToken() == "t0ken")
            try "".write(toFile: dir.appending("token"), atomically: false, encoding: .utf8)
            await #expect(throws: AgentError.self) { try await registry.readToken() }
        }
    }

    @Test func aStatusChangeSignalsTheAgent() async throws {
        try await withTemporaryDirectory { dir in
            let changes = Counter()
            let registry = try Self.registry(dir, partitions: ["a"], statusChanges: changes)
            registry.statusChanged()
            registry.statusChanged()
            #expect(changes.count.withLock { $0 } == 2)
        }
    }

    @Test func aConnectionLevelErrorGoesToTheConnection() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, partitions: ["a"])
            await registry.connectionFailed(SyncError(.otherSessionError, "retry", action: .retry))
            guard case .idle = await registry.connection.phase else { Issue.record("a retry does not stop"); return }
            let fatal = SyncError(.wrongProtocolVersion, "the server speaks protocol 9", action: .fatal)
            await registry.connectionFailed(fatal)
            guard case .stopped(let error) = await registry.connection.phase else { Issue.record("not stopped"); return }
            #expect(error == fatal)
        }
    }

    @Test func theResetsNeedAConnection() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, partitions: ["a"])
            await #expect(throws: AgentError.self) {
                _ = try await registry.fetcher.fetchState(of: PartitionName("a")!, into: dir.appending("staging.db"))
            }
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
        var result: [T] = []
        for element in self { result.append(await transform(element)) }
        return result
    }
}
