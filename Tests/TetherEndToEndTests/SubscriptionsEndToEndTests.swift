import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Subscriptions with real servers and real agents (issue 51; docs/subscriptions.md), on SQLite
/// and on PostgreSQL: two tills subscribed to different customers' rows of one partition each
/// hold only theirs; a change that moves a row out of a till's subscription removes it there
/// and brings it to the other; a write outside the subscription is a compensating write while
/// the rest of the upload syncs; a changed subscription moves the difference live, without a
/// reset; a write breaking the grant's write rule is reverted.
@Suite(.timeLimit(.minutes(6)))
struct SubscriptionsEndToEndTests {
    static func subscription(_ filter: String) -> String {
        "[[partition.subscription]]\ntable = \"orders\"\nwhere = \"\(filter)\"\n"
    }

    /// The ids of the partition's rows on `agent`, in order, one line.
    static func ids(_ agent: ClusterAgent, _ partition: String = "catalog") async throws -> String {
        try await agent.sql(partition, "SELECT group_concat(id, ',') FROM (SELECT id FROM orders ORDER BY id)")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: [ClusterSettings.Storage.sqlite, .postgresql])
    func tillsHoldOnlyTheirRowsAndRowsMoveAsTheyChange(_ storage: ClusterSettings.Storage) async throws {
        // customer is queryable: the tills' states and changes are read through the filter index
        // (PostgreSQL always; SQLite once a state is larger than one chunk).
        let settings = ClusterSettings(serverConfig: "[subscriptions]\nqueryable = [\"orders.customer\"]\n", storage: storage)
        try await withCluster(settings) { cluster in
            let hq = try cluster.agent("hq", partitions: ["catalog"])
            let tillA = try cluster.agent("till-a", partitions: ["catalog"])
            let tillB = try cluster.agent("till-b", partitions: ["catalog"])
            try tillA.reconfigure { $0.partitionExtra["catalog"] = Self.subscription("customer = 'a'") }
            try tillB.reconfigure { $0.partitionExtra["catalog"] = Self.subscription("customer = 'b'") }
            for agent in [hq, tillA, tillB] { try await agent.start() }
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", """
                INSERT INTO orders (id, customer, total) VALUES ('a1', 'a', 1), ('a2', 'a', 2), ('b1', 'b', 3), ('c1', 'c', 4)
                """)
            try await hq.waitSynced("catalog")
            for agent in [tillA, tillB] { try await agent.waitSynced("catalog") }
            try await eventually("each till holds its rows") {
                let (a, b) = (try await Self.ids(tillA), try await Self.ids(tillB))
                return a == "a1,a2" && b == "b1"
            }

            // a2 moves to customer b: it leaves till a (not deleted on the server) and enters till b.
            try await hq.sql("catalog", "UPDATE orders SET customer = 'b', total = 20 WHERE id = 'a2'")
            try await hq.waitSynced("catalog")
            try await eventually("a2 moved from till a to till b") {
                let (a, b) = (try await Self.ids(tillA), try await Self.ids(tillB))
                return a == "a1" && b == "a2,b1"
            }
            #expect(try await tillB.sql("catalog", "SELECT total FROM orders WHERE id = 'a2'") == "20.0\n", "entered whole")
            #expect(try await Self.ids(hq) == "a1,a2,b1,c1")

            // One transaction on till a: a row it may write and one outside its subscription.
            try await tillA.sql("catalog", """
                BEGIN; INSERT INTO orders (id, customer, total) VALUES ('a3', 'a', 5);
                INSERT INTO orders (id, customer, total) VALUES ('x9', 'c', 9); COMMIT;
                """)
            try await tillA.waitSynced("catalog")
            try await hq.waitSynced("catalog")
            try await eventually("the rest of the upload synced and the write outside was reverted") {
                let (a, h) = (try await Self.ids(tillA), try await Self.ids(hq))
                return a == "a1,a3" && h == "a1,a2,a3,b1,c1"
            }
            let compensating = try await tillA.events("compensating-write", partition: "catalog")
            #expect(compensating.count == 1, "\(compensating)")
            #expect(compensating.first?["table"]?.stringValue == "orders")
            #expect(compensating.first?["key"]?.stringValue == "x9")
            #expect(compensating.first?["reason"]?.stringValue == "outside_subscriptions")
            #expect(tillA.log.contains("231"), "the compensating write is logged with its code")

            // The subscription changes live: c's rows come in, nothing is reset.
            try tillA.reconfigure { $0.partitionExtra["catalog"] = Self.subscription("customer IN ('a', 'c')") }
            try await tillA.reload()
            try await tillA.waitSynced("catalog")
            try await eventually("till a holds a's and c's rows") { try await Self.ids(tillA) == "a1,a3,c1" }
            #expect(try await tillA.resets().isEmpty, "no client reset")
            // And back: c's rows leave.
            try tillA.reconfigure { $0.partitionExtra["catalog"] = Self.subscription("customer = 'a'") }
            try await tillA.reload()
            try await tillA.waitSynced("catalog")
            try await eventually("c's rows left till a") { try await Self.ids(tillA) == "a1,a3" }
            #expect(try await Self.ids(hq) == "a1,a2,a3,b1,c1", "leaving a store deletes nothing on the server")
        }
    }

    @Test(arguments: [ClusterSettings.Storage.sqlite, .postgresql])
    func aWriteBreakingTheGrantsWriteRuleIsRevertedAndTheRestSyncs(_ storage: ClusterSettings.Storage) async throws {
        // Every agent of the cluster binds as the one device user: the rule is everyone's.
        var settings = ClusterSettings(storage: storage)
        settings.grantExtra = "[[grant.write]]\ntable = \"orders\"\nwhere = \"total < 100\"\nread_only = [\"customer\"]\n"
        try await withCluster(settings) { cluster in
            let (hq, till) = (try cluster.agent("hq", partitions: ["catalog"]), try cluster.agent("till", partitions: ["catalog"]))
            for agent in [hq, till] { try await agent.start() }
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('p1', 'a', 10), ('p2', 'b', 20), ('p3', 'c', 30)")
            try await hq.waitSynced("catalog")
            try await till.waitSynced("catalog")
            try await eventually("the till has the rows") { try await Self.ids(till) == "p1,p2,p3" }
            // A customer change (read-only), a total the rule refuses, and a note (allowed), in one
            // transaction. A compensating write reverts a row's whole change (an upload carries a
            // row's changes collapsed): a note set on p1 too would be reverted with its customer.
            try await till.sql("catalog", """
                BEGIN; UPDATE orders SET customer = 'z' WHERE id = 'p1'; UPDATE orders SET total = 500 WHERE id = 'p2';
                UPDATE orders SET note = 'checked' WHERE id = 'p3'; COMMIT;
                """)
            try await till.waitSynced("catalog")
            try await hq.waitSynced("catalog")
            let expected = "p1|a|10.0|-\np2|b|20.0|-\np3|c|30.0|checked\n"
            try await eventually("the allowed change synced and the others were reverted") {
                let (h, t) = (try await hq.rows("catalog"), try await till.rows("catalog"))
                return h == expected && t == expected
            }
            let reasons = try await till.events("compensating-write", partition: "catalog").compactMap { $0["reason"]?.stringValue }
            #expect(Set(reasons) == ["read_only_column", "write_rule"], "\(reasons)")
        }
    }
}
