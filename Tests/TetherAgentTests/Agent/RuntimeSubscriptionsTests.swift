import Foundation
import Testing
import TetherControl
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// Subscriptions set at run time (`set-subscriptions`): the precedence rule, their persistence
/// in the state database, and what the registry makes of them at a change, a restart and a reload.
@Suite struct RuntimeSubscriptionsTests {
    static let p = PartitionName("p")!
    static let shop1 = try! SubscriptionSet([Subscription(table: "items", filter: "shop = 1")])
    static let shop2 = try! SubscriptionSet([Subscription(table: "items", filter: "shop = 2")])
    static let settings = try! SubscriptionSet([Subscription(table: "settings")])

    /// A configuration of partition `p` with `subscriptions` (`table`, `where`) in `dir`.
    static func configuration(_ dir: TemporaryDirectory, _ subscriptions: [(String, String?)]) throws -> AgentConfiguration {
        let lines = subscriptions.map { "[[partition.subscription]]\ntable = \"\($0.0)\"\n" + ($0.1.map { "where = \"\($0)\"\n" } ?? "") }
        return try AgentConfiguration.parse(
            text: """
                state_dir = "\(dir.path)"
                [server]
                url = "ws://127.0.0.1:1/sync"
                token_file = "\(dir.appending("token"))"
                [[partition]]
                name = "p"
                store = "\(dir.appending("p.db"))"

                """ + lines.joined(),
            file: dir.appending("tetherd.toml"))
    }

    static func registry(_ dir: TemporaryDirectory, _ subscriptions: [(String, String?)]) throws -> PartitionRegistry {
        let registry = try PartitionRegistryTests.registry(dir, partitions: ["p"])
        return PartitionRegistry(
            configuration: try configuration(dir, subscriptions), stateDatabase: registry.stateDatabase, logger: registry.logger,
            events: registry.events, connection: registry.connection, onStatusChange: {})
    }

    static func wanted(_ registry: PartitionRegistry) async throws -> SubscriptionSet? {
        try await #require(await registry.controller(named: p)).settings.subscriptions
    }

    @Test func aRuntimeSetWinsUntilTheConfiguredSetChanges() {
        let made = RuntimeSubscriptions(set: Self.shop2, configured: Self.shop1, madeAt: 1)
        #expect(RuntimeSubscriptions.inForce(configured: Self.shop1, runtime: nil) == .configured)
        #expect(RuntimeSubscriptions.inForce(configured: Self.shop1, runtime: made) == .runtime(Self.shop2))
        #expect(RuntimeSubscriptions.inForce(configured: Self.settings, runtime: made) == .outdated(made))
        #expect(RuntimeSubscriptions.inForce(configured: nil, runtime: made) == .outdated(made), "the whole partition is a set too")
        let overWhole = RuntimeSubscriptions(set: Self.shop2, configured: nil, madeAt: 1)
        #expect(RuntimeSubscriptions.inForce(configured: nil, runtime: overWhole) == .runtime(Self.shop2))
        #expect(RuntimeSubscriptions.InForce.outdated(made).wanted(configured: nil) == nil)
    }

    @Test func theStateDatabaseKeepsARuntimeSetAcrossReopening() async throws {
        try await withTemporaryDirectory { dir in
            let made = RuntimeSubscriptions(set: Self.shop2, configured: Self.shop1, madeAt: 7)
            try AgentStateDatabase(path: dir.appending("state.db")).setRuntimeSubscriptions(made, of: Self.p)
            let reopened = try AgentStateDatabase(path: dir.appending("state.db"))
            #expect(try reopened.runtimeSubscriptions(of: Self.p) == made)
            #expect(try reopened.runtimeSubscriptions(of: PartitionName("q")!) == nil)
            try reopened.setRuntimeSubscriptions(nil, of: Self.p)
            #expect(try AgentStateDatabase(path: dir.appending("state.db")).runtimeSubscriptions(of: Self.p) == nil)
        }
    }

    @Test func aChangeOutlivesARestartAndAnUnchangedReloadAndEndsWithAChangedConfiguration() async throws {
        try await withTemporaryDirectory { dir in
            let configured: [(String, String?)] = [("items", "shop = 1")]
            let registry = try Self.registry(dir, configured)
            await registry.startControllers()
            let controller = try #require(await registry.controller(named: Self.p))
            try await registry.changeSubscriptions(of: controller, to: Self.shop2)
            #expect(try await Self.wanted(registry) == Self.shop2)
            let report = try await registry.subscriptionsReport(of: controller)
            #expect(report.runtime == true && report.wanted == ["items WHERE shop = 2"] && report.configured == ["items WHERE shop = 1"])
            #expect(report.hasStore == false && !report.changePending)

            // A restart: a new registry over the same state database.
            let restarted = try Self.registry(dir, configured)
            await restarted.startControllers()
            #expect(try await Self.wanted(restarted) == Self.shop2, "kept across a restart")
            _ = await restarted.reload(try Self.configuration(dir, configured))
            #expect(try await Self.wanted(restarted) == Self.shop2, "an unchanged reload keeps it")
            _ = await restarted.reload(try Self.configuration(dir, [("settings", nil)]))
            #expect(try await Self.wanted(restarted) == Self.settings, "a changed configured set wins")
            #expect(try restarted.stateDatabase.runtimeSubscriptions(of: Self.p) == nil, "and the runtime set is forgotten")
        }
    }

    @Test func clearingGoesBackToTheConfiguredSet() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, [])
            await registry.startControllers()
            let controller = try #require(await registry.controller(named: Self.p))
            try await registry.changeSubscriptions(of: controller, to: Self.shop1)
            #expect(try await Self.wanted(registry) == Self.shop1)
            try await registry.changeSubscriptions(of: controller, to: nil)
            #expect(try await Self.wanted(registry) == nil, "the whole partition, as configured")
            #expect(try registry.stateDatabase.runtimeSubscriptions(of: Self.p) == nil)
            #expect(try await registry.subscriptionsReport(of: controller).runtime == false)
        }
    }

    @Test func aChangeDuringAClientResetIsRefusedAndChangesNothing() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try Self.registry(dir, [("items", "shop = 1")])
            await registry.startControllers()
            let controller = try #require(await registry.controller(named: Self.p))
            try registry.stateDatabase.save(ResetRecord(
                id: "r1", partition: Self.p, error: SyncError(.divergingHistories, "restored"), mode: .recoverUnsyncedChanges,
                strategy: .recover, backupPath: "/r/p.sqlite", startedAt: 1))
            await #expect(throws: SubscriptionChangeError.inReset(partition: Self.p, resetID: "r1")) {
                try await registry.changeSubscriptions(of: controller, to: Self.shop2)
            }
            #expect(try await Self.wanted(registry) == Self.shop1)
            #expect(try registry.stateDatabase.runtimeSubscriptions(of: Self.p) == nil)
            #expect(SubscriptionChangeError.inReset(partition: Self.p, resetID: "r1").response.exitCode == 1)
        }
    }

    @Test func aRequestNeedsValidSubscriptionsOrClear() throws {
        func set(_ subscriptions: [Tether.Subscription]?, clear: Bool? = nil) throws(SubscriptionChangeError) -> SubscriptionSet? {
            try PartitionRegistry.requestedSet(ControlRequest(command: .setSubscriptions, partition: "p", subscriptions: subscriptions, clear: clear))
        }
        #expect(try set(nil, clear: true) == nil)
        #expect(try set([Tether.Subscription(table: "items", where: "shop = 2")]) == Self.shop2)
        for bad: ([Tether.Subscription]?, Bool?) in [(nil, nil), ([], nil), ([Tether.Subscription(table: "items")], true)] {
            #expect(throws: SubscriptionChangeError.self) { try set(bad.0, clear: bad.1) }
        }
        do {
            _ = try set([Tether.Subscription(table: "items", where: "shop = ")])
            Issue.record("a filter that does not parse is refused")
        } catch {
            guard case .invalid(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("items") && error.response.exitCode == 2 && error.response.code == .badRequest)
        }
        #expect(throws: SubscriptionChangeError.self) { try set([Tether.Subscription(table: "no such")]) }
        let tooMany = (0...256).map { Tether.Subscription(table: "items", where: "shop = \($0)") }
        #expect(throws: SubscriptionChangeError.self) { try set(tooMany) }
    }
}
