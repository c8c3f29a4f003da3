import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Control protocol 2 with real processes (docs/control-protocol.md): `hello`, events an
/// application needs (`changes-applied` for another device's writes, `synced`, reset events
/// with the store's and its backup's paths), event numbers that go on across a restart so a
/// reader resumes where it was, and refusals with a code.
@Suite(.timeLimit(.minutes(5)))
struct ControlProtocolEndToEndTests {
    @Test func anApplicationHearsOtherDevicesWritesAndResumesAcrossARestart() async throws {
        try await withCluster { cluster in
            let agents = try await cluster.syncedAgents(["a", "b"])
            let (a, b) = (agents[0], agents[1])

            let client = ControlClient(socketPath: b.socket, timeout: .seconds(10))
            let hello = try client.send(ControlRequest(command: .hello, protocol: ControlProtocol.version))
            #expect(hello.ok)
            let report = try #require(try hello.result?.decode(as: HelloReport.self))
            #expect(report.protocolVersion == ControlProtocol.version && report.role == "operator")
            #expect(report.capabilities.contains("events-after") && report.capabilities.contains("changes-applied"))
            let before = report.lastEventSeq

            // Another device writes: b hears which tables changed, and that it caught up.
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x1', 'x', 1), ('x2', 'x', 2), ('x3', 'x', 3)")
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            let heard = try await eventually("b's changes-applied events", timeout: .seconds(20)) { () -> [JSONValue]? in
                let events = try await Self.events(b, after: before)
                return Self.rows(events, table: "orders") >= 3 ? events : nil
            }
            #expect(Self.rows(heard, table: "orders") == 3, "\(heard)")
            #expect(heard.contains { $0["event"] == "synced" && $0["partition"] == "p" })
            #expect(heard.allSatisfy { ($0["seq"]?.numberValue.map { Int($0) } ?? 0) > Int(before) })

            // b stops; a writes meanwhile; b starts again: its event numbers go on, and a
            // reader that had handled everything before the stop gets what came since.
            let lastBeforeStop = try #require(try await b.events().last?["seq"]?.numberValue.map { Int($0) })
            _ = await b.stop()
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('y1', 'y', 1), ('y2', 'y', 2)")
            try await a.waitSynced("p")
            try await b.start()
            try await b.waitSynced("p")
            let resumed = try await eventually("b's events after the restart", timeout: .seconds(20)) { () -> [JSONValue]? in
                let events = try await Self.events(b, after: UInt64(lastBeforeStop))
                return Self.rows(events, table: "orders") >= 2 ? events : nil
            }
            #expect(resumed.first?["seq"]?.numberValue.map { Int($0) } == lastBeforeStop + 1, "numbers go on across the restart: \(resumed.first ?? .null)")
            #expect(Self.rows(resumed, table: "orders") == 2)
            #expect(!resumed.contains { $0["event"] == "dropped" })

            // Refusals carry a code.
            let tooNew = try client.send(ControlRequest(command: .hello, protocol: ControlProtocol.version + 1))
            #expect(!tooNew.ok && tooNew.code == .protocolTooNew)
            let unknown = try await b.ctl(["events", "--no-follow", "--json", "--partition", "nope"])
            #expect(unknown.status == 1 && unknown.standardOutput.contains(#""code" : "unknown-partition""#), "\(unknown)")
        }
    }

    /// A reset's events name the store and the backup it kept, which is there to compare.
    @Test func resetEventsCarryTheStoreAndItsBackup() async throws {
        try await withCluster { cluster in
            let a = try await cluster.syncedAgents(["a"])[0]
            let snapshot = try await cluster.admin(["snapshot", "p"])
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('after', 'a', 1)")
            try await a.waitSynced("p")
            try await cluster.admin(["restore", "p", snapshot, "--rollback"])
            let outcome = try await eventually("a reset's outcome", timeout: .seconds(60)) {
                try await a.events("reset-outcome").last
            }
            let backup = try #require(outcome["backup_path"]?.stringValue)
            #expect(outcome["store_path"]?.stringValue == a.store("p"))
            #expect(FileManager.default.fileExists(atPath: backup), "the backup the event names is there: \(backup)")
            let phases = try await a.events("reset-phase")
            #expect(!phases.isEmpty && phases.allSatisfy { $0["backup_path"]?.stringValue == backup })
        }
    }

    static func events(_ agent: ClusterAgent, after seq: UInt64) async throws -> [JSONValue] {
        let result = try await agent.ctl(["events", "--no-follow", "--json", "--after", String(seq)])
        guard result.status == 0 else { throw TestSupportError("tetherctl events --after failed: \(result)") }
        return jsonLines(result.standardOutput)
    }

    /// Rows of `table` the `changes-applied` events among `events` report.
    static func rows(_ events: [JSONValue], table: String) -> Int {
        events.filter { $0["event"] == "changes-applied" }.compactMap { $0["tables"]?[table]?.numberValue.map { Int($0) } }.reduce(0, +)
    }
}
