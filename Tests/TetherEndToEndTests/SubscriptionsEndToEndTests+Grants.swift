import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// A grant imposing a read subscription (`[[grant.subscription]]`, issue 51) with real programs,
/// on SQLite and PostgreSQL: an enrolled till whose configuration subscribes to nothing holds
/// only its shop's rows (state as rows, never a ready file); a write outside them is a
/// compensating write; moving it to another shop swaps exactly those rows at the rebind, and
/// back (the store names the change it took by its scope token, kept for a whole-partition
/// store), without a reset.
extension SubscriptionsEndToEndTests {
    @Test(arguments: [ClusterSettings.Storage.sqlite, .postgresql])
    func aGrantsSubscriptionBoundsWhatATillWithoutSubscriptionsHolds(_ storage: ClusterSettings.Storage) async throws {
        var settings = ClusterSettings(storage: storage)
        settings.serverConfig += """

            [[grant]]
            user = "tag:fleet=tills"
            partitions = ["catalog"]
            access = "readwrite"
            [[grant.subscription]]
            table = "orders"
            where = "customer = {tag:shop}"

            """
        try await withCluster(settings) { cluster in
            let key = try await cluster.createEnrollmentKey(["--reusable", "--tag", "fleet=tills", "--tag", "shop=a"])
            let hq = try cluster.agent("hq", partitions: ["catalog"])
            try await hq.start()
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a1', 'a', 1), ('a2', 'a', 2), ('b1', 'b', 3)")
            try await hq.waitSynced("catalog")

            let till = try cluster.enrollingAgent("till", partitions: ["catalog"], keyFile: cluster.dir.appending("till") + "/enroll.key")
            _ = try till.installEnrollmentKey(key)
            try await till.start()
            let id = try await eventually("the till enrolled", timeout: .seconds(60)) {
                till.log.contains("enrolled as device ") ? till.enrolledDeviceID : nil
            }
            let name = try #require(try await cluster.enrolledDevices().first { $0["device_id"]?.stringValue == id }?["name"]?.stringValue)
            try await till.waitSynced("catalog")
            try await eventually("the till holds shop a's rows only") { try await Self.ids(till) == "a1,a2" }

            // A row of another shop written on the till is reverted; its own goes up.
            try await till.sql("catalog", """
                BEGIN; INSERT INTO orders (id, customer, total) VALUES ('a3', 'a', 4);
                INSERT INTO orders (id, customer, total) VALUES ('x9', 'b', 9); COMMIT;
                """)
            try await till.waitSynced("catalog")
            try await hq.waitSynced("catalog")
            try await eventually("a3 synced and x9 was reverted") {
                let (t, h) = (try await Self.ids(till), try await Self.ids(hq))
                return t == "a1,a2,a3" && h == "a1,a2,a3,b1"
            }
            let compensating = try await till.events("compensating-write", partition: "catalog")
            #expect(compensating.map { $0["key"]?.stringValue } == ["x9"])
            #expect(compensating.first?["reason"]?.stringValue == "outside_subscriptions")

            for (shop, expected) in [("b", "b1"), ("a", "a1,a2,a3")] {
                _ = try await cluster.admin(["device", "tag", name, "shop=\(shop)"])
                try await eventually("the till holds shop \(shop)'s rows", timeout: .seconds(60)) { try await Self.ids(till) == expected }
                try await till.waitSynced("catalog")
            }
            #expect(try await till.resets().isEmpty, "no client reset")
            #expect(try await Self.ids(hq) == "a1,a2,a3,b1", "nothing left the server")
        }
    }
}
