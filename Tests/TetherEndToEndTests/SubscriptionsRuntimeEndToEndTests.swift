import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Subscriptions changed at run time (docs/subscriptions.md "Changing them at run time") with a
/// real server and real agents: `tetherctl subscriptions catalog set … --wait` narrows a till's
/// store to the matching rows, a set its schema cannot serve is refused with nothing changed,
/// the set outlives a restart of the agent, and `clear` brings the whole partition back — all
/// without a client reset.
@Suite(.timeLimit(.minutes(6)))
struct SubscriptionsRuntimeEndToEndTests {
    static func ids(_ agent: ClusterAgent) async throws -> String {
        try await SubscriptionsEndToEndTests.ids(agent)
    }

    @Test func aSetMadeAtRunTimeOutlivesARestartUntilItIsCleared() async throws {
        try await withCluster(ClusterSettings(storage: .sqlite)) { cluster in
            let hq = try cluster.agent("hq", partitions: ["catalog"])
            let till = try cluster.agent("till", partitions: ["catalog"])
            for agent in [hq, till] { try await agent.start() }
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a1', 'a', 1), ('a2', 'a', 2), ('b1', 'b', 3)")
            try await hq.waitSynced("catalog")
            try await till.waitSynced("catalog")
            try await eventually("the till holds the whole partition") { try await Self.ids(till) == "a1,a2,b1" }

            let set = try await till.ctl(
                ["subscriptions", "catalog", "set", "--table", "orders", "--where", "customer = 'a'", "--wait", "--timeout", "60"],
                timeout: .seconds(90))
            #expect(set.status == 0, "\(set)\n\(till.log.suffix(3000))")
            #expect(set.standardOutput.contains("the store holds them"), "\(set)")
            #expect(try await Self.ids(till) == "a1,a2", "--wait returned once the store held only the matching rows")
            let report = try await till.json(["subscriptions", "catalog"])
            #expect(report["runtime"] == true && report["change_pending"] == false && report["configured"] == .null, "\(report)")
            #expect(report["held"] == report["wanted"] && report["wanted"] == ["orders WHERE customer = 'a'"], "\(report)")

            // A set the store's schema cannot serve: refused as a usage error, nothing changed.
            let refused = try await till.ctl(["subscriptions", "catalog", "set", "--table", "orders", "--where", "nope = 1"])
            #expect(refused.status == 2 && refused.standardError.contains("nope"), "\(refused)")
            #expect(try await till.json(["subscriptions", "catalog"])["wanted"] == ["orders WHERE customer = 'a'"])

            // A restart keeps it: new rows of b stay out, new rows of a come in.
            await till.stop()
            try await till.start()
            #expect(try await till.json(["subscriptions", "catalog"])["runtime"] == true)
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('a3', 'a', 4), ('b2', 'b', 5)")
            try await hq.waitSynced("catalog")
            try await till.waitSynced("catalog")
            try await eventually("after the restart the till holds a's rows only") { try await Self.ids(till) == "a1,a2,a3" }

            // Cleared: the configured set (the whole partition) is in force again.
            let clear = try await till.ctl(["subscriptions", "catalog", "clear", "--wait", "--timeout", "60"], timeout: .seconds(90))
            #expect(clear.status == 0, "\(clear)\n\(till.log.suffix(3000))")
            #expect(try await Self.ids(till) == "a1,a2,a3,b1,b2", "the whole partition came back")
            let cleared = try await till.json(["subscriptions", "catalog"])
            #expect(cleared["runtime"] == false && cleared["held"] == .null && cleared["change_pending"] == false, "\(cleared)")
            #expect(try await till.resets().isEmpty, "no client reset")
            #expect(try await Self.ids(hq) == "a1,a2,a3,b1,b2", "leaving the till's store deleted nothing")
        }
    }
}
