import Foundation
import Testing
import TetherAgent
import TetherControl
import TetherProtocol
import TetherStore
import TetherTestSupport
import TetherTOML

/// `[[partition.subscription]]` (issue 51): parsed into `PartitionSettings.subscriptions`, each
/// problem naming its key and line; `--check-config`'s check against an existing store.
@Suite struct PartitionSettingsSubscriptionsTests {
    private static func parse(_ body: String) throws(ConfigError) -> AgentConfiguration {
        try AgentConfiguration.parse(text: """
            [server]
            url = "ws://127.0.0.1:7800/sync"
            token_file = "/nonexistent/token"

            \(body)
            """, file: "tetherd.toml", checkFiles: false)
    }

    private static func problems(_ body: String) -> [String] {
        do {
            _ = try parse(body)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func aPartitionWithoutSubscriptionsSyncsWhole() throws {
        let config = try Self.parse("""
            [[partition]]
            name = "p"
            """)
        #expect(config.partitions[0].subscriptions == nil)
    }

    @Test func subscriptionsAreReadSortedAndWithoutDuplicates() throws {
        let config = try Self.parse("""
            [[partition]]
            name = "shop"
            [[partition.subscription]]
            table = "orders"
            where = "shop_id = {tag:shop} AND total > 10"
            [[partition.subscription]]
            table = "items"
            [[partition.subscription]]
            table = "items"

            [[partition]]
            name = "other"
            """)
        let set = try #require(config.partitions[0].subscriptions)
        #expect(set.subscriptions == [
            Subscription(table: "items"), Subscription(table: "orders", filter: "shop_id = {tag:shop} AND total > 10"),
        ])
        #expect(config.partitions[1].subscriptions == nil)
    }

    @Test func aBadFilterNamesItsKeyLineAndByte() {
        let found = Self.problems("""
            [[partition]]
            name = "shop"
            [[partition.subscription]]
            table = "orders"
            where = "total > AND"
            """)
        #expect(found.count == 1, "\(found)")
        let problem = found.first ?? ""
        #expect(problem.hasPrefix("tetherd.toml:9: partition[0].subscription[0].where: "), "\(problem)")
        #expect(problem.contains("at byte"), "\(problem)")
    }

    @Test func aMissingOrIllegalTableIsRefused() {
        let found = Self.problems("""
            [[partition]]
            name = "shop"
            [[partition.subscription]]
            where = "total > 1"
            [[partition.subscription]]
            table = "_tether_meta"
            """)
        #expect(found.count == 2, "\(found)")
        #expect(found.contains { $0.contains("partition[0].subscription[0].table: missing required key") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("tetherd.toml:10: partition[0].subscription[1].table: ") && $0.contains("reserved") }, "\(found)")
    }

    @Test func anUnknownKeyIsRefused() {
        let found = Self.problems("""
            [[partition]]
            name = "shop"
            [[partition.subscription]]
            table = "orders"
            filter = "total > 1"
            """)
        #expect(found == ["tetherd.toml:9: partition[0].subscription[0].filter: unknown key"], "\(found)")
    }

    @Test func moreThan256SubscriptionsAreRefused() {
        let entries = (0...SubscriptionSetLimits.maxSubscriptions).map { "[[partition.subscription]]\ntable = \"t\($0)\"" }
        let found = Self.problems("[[partition]]\nname = \"shop\"\n" + entries.joined(separator: "\n"))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.contains("at most 256") == true, "\(found)")
    }

    @Test func theDiagnosticsShowTheSubscriptions() throws {
        let config = try Self.parse("""
            [[partition]]
            name = "shop"
            [[partition.subscription]]
            table = "orders"
            where = "total > 1"
            [[partition.subscription]]
            table = "items"
            [[partition]]
            name = "whole"
            """)
        guard case .array(let partitions)? = config.diagnostics["partition"] else {
            Issue.record("no partitions in \(config.diagnostics)")
            return
        }
        #expect(partitions.first?["subscription"] == [["table": "items", "where": .null], ["table": "orders", "where": "total > 1"]])
        #expect(partitions.last?["subscription"] == nil, "a partition without subscriptions has no such key")
    }

    @Test func checkConfigChecksSubscriptionsAgainstAnExistingStore() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-subscriptions")
        defer { dir.remove() }
        let schema = Schema(version: 3, tables: [
            TableSchema(name: "orders", primaryKey: "id", columns: [
                ColumnSchema(name: "id", type: .text), ColumnSchema(name: "total", type: .real),
            ]),
        ])
        let storePath = dir.appending("shop.sqlite")
        let store = try await PartitionStore.open(path: storePath, partition: PartitionName("shop")!, schema: schema)
        try store.close()
        let config = try Self.parse("""
            [[partition]]
            name = "shop"
            store = "\(storePath)"
            [[partition.subscription]]
            table = "orders"
            where = "total > 1"
            [[partition.subscription]]
            table = "orders"
            where = "colour = 'red'"
            [[partition.subscription]]
            table = "customers"

            [[partition]]
            name = "absent"
            store = "\(dir.appending("absent.sqlite"))"
            [[partition.subscription]]
            table = "customers"
            """)
        let check = config.subscriptionProblems()
        #expect(check.skipped.isEmpty)
        #expect(check.problems.count == 2, "\(check.problems)")
        #expect(check.problems.contains { $0.hasPrefix("partition shop: subscription customers: the schema has no table customers") }, "\(check.problems)")
        #expect(check.problems.contains { $0.hasPrefix("partition shop: subscription orders WHERE colour = 'red': ") && $0.contains("colour") }, "\(check.problems)")
    }
}
