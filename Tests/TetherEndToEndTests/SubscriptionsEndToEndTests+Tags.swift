import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// A till enrolled with a `shop` tag and subscribed to `customer = {tag:shop}` (issue 51): when the
/// operator moves it to another shop, exactly the old shop's rows leave its store and the new
/// shop's enter, at the rebind the tag change causes, without a reset; and back again (the
/// server resolves the rows the store holds with the tags they were chosen with, named by the
/// token of the change that gave them).
extension SubscriptionsEndToEndTests {
    @Test func aTillMovedToAnotherShopSwapsExactlyItsRows() async throws {
        try await withCluster { cluster in
            _ = try await cluster.admin(["grant", "tag:fleet=tills", "catalog", "readwrite"])
            let key = try await cluster.createEnrollmentKey(["--reusable", "--tag", "fleet=tills", "--tag", "shop=a"])
            let hq = try cluster.agent("hq", partitions: ["catalog"])
            try await hq.start()
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a1', 'a', 1), ('a2', 'a', 2), ('b1', 'b', 3)")
            try await hq.waitSynced("catalog")

            let till = try cluster.enrollingAgent("till", partitions: ["catalog"], keyFile: cluster.dir.appending("till") + "/enroll.key")
            _ = try till.installEnrollmentKey(key)
            try till.reconfigure { $0.partitionExtra["catalog"] = Self.subscription("customer = {tag:shop}") }
            try await till.start()
            let id = try await eventually("the till enrolled", timeout: .seconds(60)) {
                till.log.contains("enrolled as device ") ? till.enrolledDeviceID : nil
            }
            let name = try #require(try await cluster.enrolledDevices().first { $0["device_id"]?.stringValue == id }?["name"]?.stringValue)
            try await till.waitSynced("catalog")
            try await eventually("the till holds shop a's rows") { try await Self.ids(till) == "a1,a2" }

            for (shop, expected) in [("b", "b1"), ("a", "a1,a2")] {
                _ = try await cluster.admin(["device", "tag", name, "shop=\(shop)"])
                try await eventually("the till holds shop \(shop)'s rows", timeout: .seconds(60)) { try await Self.ids(till) == expected }
                try await till.waitSynced("catalog")
            }
            #expect(try await till.resets().isEmpty, "no client reset")
            #expect(try await Self.ids(hq) == "a1,a2,b1", "nothing left the server")
        }
    }
}
