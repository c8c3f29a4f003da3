import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Subscriptions through restores (issue 51): a server restored with healing, and a device
/// restored from an older image, both with a till subscribed to its customer's rows, lose
/// nothing — in particular the till's view never deletes a row that only left its subscription.
extension SubscriptionsEndToEndTests {
    /// Waits until `agent`'s last reset ended with `outcome` and the partition synced.
    /// On a timeout the error carries the resets recorded and the end of the agent's log.
    static func resetDone(_ agent: ClusterAgent, outcome: String = "recovered") async throws -> JSONValue {
        let reset: JSONValue
        do {
            reset = try await eventually("\(agent.name) reset \(outcome)", timeout: .seconds(90)) { () -> JSONValue? in
                let last = try await agent.resets().last
                return last?["outcome"]?.stringValue == outcome ? last : nil
            }
        } catch let timeout as ConditionTimeout {
            let resets = (try? await agent.resets()).map { "\($0)" } ?? "(unreadable)"
            throw TestSupportError("\(timeout); resets: \(resets)\n\(agent.name)'s log ends:\n\(agent.log.suffix(6000))")
        }
        try await agent.waitSynced("catalog")
        return reset
    }

    @Test(arguments: [ClusterSettings.Storage.sqlite, .postgresql])
    func aServerRestoredWithHealingLosesNothingOfTillsWithSubscriptions(_ storage: ClusterSettings.Storage) async throws {
        try await withCluster(ClusterSettings(storage: storage)) { cluster in
            let hq = try cluster.agent("hq", partitions: ["catalog"])
            let till = try cluster.agent("till", partitions: ["catalog"])
            try till.reconfigure { $0.partitionExtra["catalog"] = Self.subscription("customer = 'a'") }
            for agent in [hq, till] { try await agent.start() }
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a1', 'a', 1), ('a2', 'a', 2), ('b1', 'b', 3)")
            try await hq.waitSynced("catalog")
            try await eventually("the till holds a's rows") { try await Self.ids(till) == "a1,a2" }
            let snapshot = try await cluster.admin(["snapshot", "catalog"])
            // After the snapshot: a2 leaves the till's subscription, the till writes a3.
            try await hq.sql("catalog", "UPDATE orders SET customer = 'b' WHERE id = 'a2'")
            try await hq.waitSynced("catalog")
            try await till.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a3', 'a', 4)")
            try await till.waitSynced("catalog")
            try await eventually("the till holds a1 and a3") { try await Self.ids(till) == "a1,a3" }
            try await hq.waitSynced("catalog")
            // The till heals first: its view lacks a2, which the restored server has as a's.
            try await hq.ctl(["pause", "catalog"])
            _ = try await cluster.admin(["restore", "catalog", snapshot, "--heal"])
            _ = try await Self.resetDone(till)
            try await hq.ctl(["resume", "catalog"])
            _ = try await Self.resetDone(hq)
            try await till.waitSynced("catalog")
            let expected = "a1|a|1.0|-\na2|b|2.0|-\na3|a|4.0|-\nb1|b|3.0|-\n"
            try await eventually("the server holds every row, a2 with its last value") { try await hq.rows("catalog") == expected }
            #expect(try await Self.ids(till) == "a1,a3")
        }
    }

    @Test func aTillRestoredFromAnOlderImageGetsItsRowsAndItsSubscriptionBack() async throws {
        try await withCluster { cluster in
            let hq = try cluster.agent("hq", partitions: ["catalog"])
            let till = try cluster.agent("till", partitions: ["catalog"])
            try till.reconfigure { $0.partitionExtra["catalog"] = Self.subscription("customer = 'a'") }
            for agent in [hq, till] { try await agent.start() }
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a1', 'a', 1), ('b1', 'b', 2)")
            try await hq.waitSynced("catalog")
            try await eventually("the till holds a1") { try await Self.ids(till) == "a1" }
            await till.stop()
            let image = cluster.dir.appending("image")
            try FileManager.default.copyItem(atPath: till.dir + "/state", toPath: image)
            // After the image: the till writes a2 and syncs; a1 leaves its subscription on the server.
            try await till.start()
            try await till.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a2', 'a', 3)")
            try await till.waitSynced("catalog")
            try await hq.sql("catalog", "UPDATE orders SET customer = 'b' WHERE id = 'a1'")
            try await hq.waitSynced("catalog")
            try await eventually("a1 left the till") { try await Self.ids(till) == "a2" }
            await till.stop()
            try FileManager.default.removeItem(atPath: till.dir + "/state")
            try FileManager.default.copyItem(atPath: image, toPath: till.dir + "/state")
            // Restored, it writes a3 before it reconnects.
            try await till.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a3', 'a', 4)")
            try await till.start()
            _ = try await Self.resetDone(till)
            try await hq.waitSynced("catalog")
            try await eventually("the till holds a2 and a3, the server every row") {
                let (t, h) = (try await Self.ids(till), try await hq.rows("catalog"))
                return t == "a2,a3" && h == "a1|b|1.0|-\na2|a|3.0|-\na3|a|4.0|-\nb1|b|2.0|-\n"
            }
        }
    }
}
