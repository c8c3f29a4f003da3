import Foundation
import Testing
import TetherProtocol
import TetherTOML
@testable import TetherServer

/// `[[grant.subscription]]` (issue 51): a grant's read subscriptions parse with their filter's
/// syntax checked (a bad one names the key and line), and combine across the grants that give a
/// device a partition (``SyncService/imposedSubscriptions(for:partition:snapshot:)``).
@Suite struct ServerConfigurationGrantSubscriptionTests {
    static func parse(_ grants: String) throws -> ServerConfiguration {
        try ServerConfiguration.parse(toml: """
            admin_token_file = "/a"
            [[user]]
            name = "u"
            token_file = "/u.token"
            \(grants)
            """, file: "f.toml")
    }

    static func grant(in partitions: String = "\"catalog\"", access: String = "read", user: String = "u", _ subscriptions: String) -> String {
        """
        [[grant]]
        user = "\(user)"
        partitions = [\(partitions)]
        access = "\(access)"
        \(subscriptions)
        """
    }

    @Test func aGrantCarriesItsSubscriptionsReadOrReadwrite() throws {
        for access in ["read", "readwrite"] {
            let config = try Self.parse(Self.grant(access: access, """
                [[grant.subscription]]
                table = "items"
                where = "shop = {tag:shop}"
                [[grant.subscription]]
                table = "notes"
                """))
            #expect(config.grants.first?.subscriptions == [
                Subscription(table: "items", filter: "shop = {tag:shop}"), Subscription(table: "notes", filter: nil),
            ])
        }
    }

    @Test(arguments: [
        ("[[grant.subscription]]\ntable = \"items\"\nwhere = \"shop = \"", "f.toml:11: grant[0].subscription[0].where:"),
        ("[[grant.subscription]]\ntable = \"items\"\nwhere = \"shop = {nope}\"", "f.toml:11: grant[0].subscription[0].where:"),
        ("[[grant.subscription]]\ntable = \"it ems\"", "f.toml:10: grant[0].subscription[0].table: table name"),
        ("[[grant.subscription]]\nwhere = \"a = 1\"", "grant[0].subscription[0].table"),
        ("[[grant.subscription]]\ntable = \"items\"\nwhen = \"a = 1\"", "when"),
    ])
    func aBadSubscriptionNamesItsKeyAndLine(subscriptions: String, problem: String) {
        let error = #expect(throws: ConfigError.self) { try Self.parse(Self.grant(subscriptions)) }
        #expect(error?.description.contains(problem) == true, "\(error.map { "\($0)" } ?? "")")
    }

    static func imposed(_ grants: String, partition: String, subject: AccessSubject = .user("u")) throws -> Result<SubscriptionSet?, SyncError> {
        let configured = try parse(grants).grants
        let policy = PolicySnapshot(
            users: UserDirectory(entries: []), adminToken: TokenDigest(token: "a"), configuredGrants: configured, runtimeGrants: [],
            access: AccessPolicy(configured: configured, runtime: []), flags: ServerFlags(), configuredRecovery: true,
            schemas: InProcessSync.schemas)
        return SyncService.imposedSubscriptions(for: subject, partition: PartitionName(partition)!, snapshot: policy)
    }

    static func subscription(_ filter: String?, table: String = "items") -> String {
        "[[grant.subscription]]\ntable = \"\(table)\"" + (filter.map { "\nwhere = \"\($0)\"" } ?? "")
    }

    @Test func aTableIsRestrictedOnlyWhenEveryGrantGivingThePartitionImposesOnIt() throws {
        let a = Self.grant(in: "\"catalog-*\"", Self.subscription("shop = 1") + "\n" + Self.subscription(nil, table: "notes"))
        let b = Self.grant(in: "\"catalog-1\"", access: "readwrite", Self.subscription("shop = 2"))
        let c = Self.grant(in: "\"catalog-1\"", Self.subscription(nil, table: "notes"))
        // One grant: its subscriptions.
        #expect(try Self.imposed(a, partition: "catalog-2").get()
            == SubscriptionSet([Subscription(table: "items", filter: "shop = 1"), Subscription(table: "notes")]))
        // Two grants imposing on items: either filter; notes only by one: unrestricted.
        #expect(try Self.imposed(a + "\n" + b, partition: "catalog-1").get() == SubscriptionSet([
            Subscription(table: "items", filter: "shop = 1"), Subscription(table: "items", filter: "shop = 2"),
        ]))
        #expect(try Self.imposed(a + "\n" + b, partition: "catalog-2").get()?.tables == ["items", "notes"], "b does not give catalog-2")
        // A grant imposing nothing on items lifts it; one imposing nothing at all lifts everything.
        #expect(try Self.imposed(a + "\n" + c, partition: "catalog-1").get() == SubscriptionSet([Subscription(table: "notes")]))
        #expect(try Self.imposed(a + "\n" + Self.grant(in: "\"catalog-1\"", ""), partition: "catalog-1").get() == nil)
        #expect(try Self.imposed(Self.grant(""), partition: "catalog").get() == nil)
        // Another user's grant does not count.
        let other = "[[user]]\nname = \"v\"\ntoken_file = \"/v.token\"\n" + Self.grant(in: "\"catalog-1\"", user: "v", "")
        #expect(try Self.imposed(other + "\n" + a, partition: "catalog-1").get()?.tables == ["items", "notes"])
    }

    @Test func aGrantMadeAtRunTimeOverridesTheConfiguredOnesSubscriptions() throws {
        let configured = try Self.parse(Self.grant(Self.subscription("shop = 1"))).grants
        let runtime = [RuntimeGrant(user: "u", pattern: try GrantPattern.parse("catalog").get(), access: .read)]
        let policy = PolicySnapshot(
            users: UserDirectory(entries: []), adminToken: TokenDigest(token: "a"), configuredGrants: configured, runtimeGrants: runtime,
            access: AccessPolicy(configured: configured, runtime: runtime), flags: ServerFlags(), configuredRecovery: true,
            schemas: InProcessSync.schemas)
        #expect(try SyncService.imposedSubscriptions(for: .user("u"), partition: PartitionName("catalog")!, snapshot: policy).get() == nil)
    }

    @Test func aReloadChangingWhatTheGrantsImposeMakesABoundSessionBindAgain() throws {
        func snapshot(_ grants: String) throws -> PolicySnapshot {
            let configured = try Self.parse(grants).grants
            return PolicySnapshot(
                users: UserDirectory(entries: [(name: "u", token: "tok")]), adminToken: TokenDigest(token: "a"),
                configuredGrants: configured, runtimeGrants: [], access: AccessPolicy(configured: configured, runtime: []),
                flags: ServerFlags(), configuredRecovery: true, schemas: InProcessSync.schemas)
        }
        var session = BoundSession(
            key: SessionKey(connection: 1, session: 1), partition: PartitionName("catalog")!, clientFile: 1, user: "u",
            tokenDigest: TokenDigest(token: "tok"), access: .read, fail: { _ in })
        session.imposed = try SubscriptionSet([Subscription(table: "items", filter: "shop = 1")])
        #expect(BindRules.revalidate(session, against: try snapshot(Self.grant(Self.subscription("shop = 1")))) == nil)
        let changed = BindRules.revalidate(session, against: try snapshot(Self.grant(Self.subscription("shop = 2"))))
        #expect(changed?.code == .otherSessionError && changed?.message.contains("impose") == true)
        #expect(BindRules.revalidate(session, against: try snapshot(Self.grant(""))) != nil, "lifted: bind again too")
    }
}
