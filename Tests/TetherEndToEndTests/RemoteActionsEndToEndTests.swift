import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Remote actions with real agents and servers (issue 49; docs/server.md "Remote actions"), on
/// SQLite and on two PostgreSQL instances with the device connected to the instance the action
/// is not asked on: a manual reset initiated from the server completes on the device; a
/// delete-store waiting for an operator is carried out remotely and the device syncs after the
/// grant; an action queued for an offline device runs when it connects, and one nobody answers
/// expires; a device refuses what its `[device] remote_actions` does not list, and a partition it
/// does not sync; a selection larger than `max_devices_per_action` is refused whole.
@Suite(.timeLimit(.minutes(6)))
struct RemoteActionsEndToEndTests {
    enum Setup: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgresqlTwoInstances
        var testDescription: String { rawValue }
        func settings(_ devices: String = "") -> ClusterSettings {
            let config = "[devices]\naction_expire_after_seconds = 15\nmax_devices_per_action = 1\n" + devices
            return switch self {
            case .sqlite: ClusterSettings(serverConfig: config)
            case .postgresqlTwoInstances: ClusterSettings(serverConfig: config, storage: .postgresql, instances: 2)
            }
        }
        /// The instance the device connects to; actions are asked on instance 0.
        var deviceInstance: Int { self == .sqlite ? 0 : 1 }
    }

    /// A device's actions as `admin device actions NAME --json` lists them, newest first.
    static func actions(_ cluster: Cluster, _ device: String, instance: Int = 0) async throws -> JSONValue {
        let text = try await cluster.admin(["device", "actions", device, "--json"], instance: instance)
        return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// The device's actions once it has reported; nil while the ledger has not heard of it (its
    /// first report can come after its first sync on a busy machine). Other failures throw.
    static func reportedActions(_ cluster: Cluster, _ device: String) async throws -> JSONValue? {
        let result = try await ChildProcess.run(
            try BuiltProducts.executable("tether-server"),
            ["admin", "--url", cluster.adminURL(), "--token-file", cluster.dir.appending("admin.token"),
             "device", "actions", device, "--json"])
        if result.status != 0, result.standardError.contains("no device has the id or name") { return nil }
        guard result.status == 0 else { throw TestSupportError("admin device actions \(device) failed: \(result)") }
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.standardOutput.utf8))
    }

    /// The action with this id, as the device's list says.
    static func action(_ cluster: Cluster, _ device: String, id: Double) async throws -> JSONValue? {
        try await actions(cluster, device)["actions"]?.arrayValue?.first { $0["id"]?.numberValue == id }
    }

    /// Asks for an action and returns its id.
    static func ask(_ cluster: Cluster, _ arguments: [String]) async throws -> Double {
        let text = try await cluster.admin(["device", "action"] + arguments + ["--json"])
        let answer = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        return try #require(answer["actions"]?.arrayValue?.first?["id"]?.numberValue, "\(text)")
    }

    /// Waits until the action has ended and returns it.
    static func ended(_ cluster: Cluster, _ device: String, id: Double, timeout: Int = 60) async throws -> JSONValue {
        try await eventually("action \(Int(id)) answered", timeout: .seconds(timeout)) { () -> JSONValue? in
            let action = try await Self.action(cluster, device, id: id)
            return ["queued", "sent", nil].contains(action?["state"]?.stringValue) ? nil : action
        }
    }

    @Test(arguments: Setup.allCases)
    func aManualResetIsInitiatedFromTheServerAndRefusalsAreClear(_ setup: Setup) async throws {
        try await withCluster(setup.settings()) { cluster in
            let till = try cluster.agent(
                "b", partitions: ["p", "q"], extra: "[device]\nname = \"till-b\"\nreport_interval_seconds = 1\n[reset]\nmode = \"manual\"",
                url: cluster.url(instance: setup.deviceInstance))
            try await till.start()
            try await till.waitSynced("p")
            try await till.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('kept', 'k', 1)")
            try await till.waitSynced("p")

            // What it accepts, from its reports: the default (all but pause).
            try await eventually("the device's accepted actions known", timeout: .seconds(30)) {
                try await Self.reportedActions(cluster, "till-b")?["accepts"]?.arrayValue?.compactMap(\.stringValue)
                    == ["initiate-reset", "retry-now", "resume", "diagnostics"]
            }

            // A manual reset waits; the operator starts it from the server.
            try await cluster.admin(["terminate-sync"])
            try await cluster.admin(["enable-sync"])
            try await eventually("p waits for an operator", timeout: .seconds(60)) { try await till.status("p")?["state"] == "reset-pending" }
            // From the console: a confirmation first, then the confirmed form queues it as `console`.
            let console = try ConsoleForms.signIn(port: cluster.adminPorts[0], token: "admin-secret")
            let fields = ["kind": "initiate-reset", "device": "till-b", "partition": "p"]
            let confirmation = try console.post("/console/actions/remote-action", fields)
            #expect(confirmation.status == 200 && confirmation.body.contains("Confirm"), "\(confirmation)")
            #expect(try await Self.actions(cluster, "till-b")["actions"]?.arrayValue?.isEmpty == true, "nothing queued before the confirmation")
            let asked = try console.post("/console/actions/remote-action", fields.merging(["confirmed": "yes"]) { a, _ in a })
            #expect(asked.status == 200 && asked.body.contains("Asked 1 device"), "\(asked)")
            let reset = try #require(try await Self.actions(cluster, "till-b")["actions"]?.arrayValue?.first?["id"]?.numberValue)
            let done = try await Self.ended(cluster, "till-b", id: reset)
            #expect(done["state"] == "done" && done["requested_by"] == "console", "\(done)")
            try await till.waitSynced("p", timeout: 90)
            #expect(try await till.rows("p").contains("kept"))
            #expect(try await till.ctl(["resets"]).standardOutput.contains("manual-done"))

            // Refused by the device: pause is not in its remote_actions; a partition it does not sync.
            let pause = try await Self.ask(cluster, ["till-b", "pause", "--partition", "p"])
            let refused = try await Self.ended(cluster, "till-b", id: pause)
            #expect(refused["state"] == "refused" && refused["message"]?.stringValue?.contains("remote_actions") == true, "\(refused)")
            #expect(try await till.status("p")?["state"] != "paused")
            let elsewhere = try await Self.ask(cluster, ["till-b", "initiate-reset", "--partition", "not-mine"])
            let unknown = try await Self.ended(cluster, "till-b", id: elsewhere)
            #expect(unknown["state"] == "refused", "\(unknown)")

            // Diagnostics: a JSON report without the device's token.
            let diagnostics = try await Self.ask(cluster, ["till-b", "diagnostics"])
            #expect(try await Self.ended(cluster, "till-b", id: diagnostics)["has_diagnostics"] == .bool(true))
            let shown = try await cluster.admin(["action", "show", "\(Int(diagnostics))"])
            #expect(shown.contains("till-b") && shown.contains("\"partitions\"") || shown.contains("\"status\""), "\(shown)")
            let token = try String(contentsOfFile: cluster.dir.appending("device.token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!shown.contains(token), "the device's token in its diagnostics")

            // A selection beyond max_devices_per_action (1) is refused whole; a count says how many.
            let other = try cluster.agent("c", partitions: ["p"], extra: "[device]\nname = \"till-c\"\nreport_interval_seconds = 1")
            try await other.start()
            try await other.waitSynced("p")
            try await eventually("both devices in the ledger", timeout: .seconds(30)) {
                try await cluster.admin(["action", "request", "retry-now", "--partition", "p"]).contains("would go to 2 devices")
            }
            let tooMany = try await ChildProcess.run(
                try BuiltProducts.executable("tether-server"),
                ["admin", "--url", cluster.adminURL(), "--token-file", cluster.dir.appending("admin.token"), "action", "request", "retry-now",
                 "--partition", "p", "--yes"])
            #expect(tooMany.status != 0 && tooMany.standardError.contains("max_devices_per_action"), "\(tooMany)")
            let audit = try await cluster.admin(["audit"])
            #expect(audit.contains("device.action") && audit.contains("device.action-result"), "\(audit)")
            #expect(audit.components(separatedBy: "retry-now").count == 1, "nothing of the refused selection was queued")
        }
    }

    @Test(arguments: Setup.allCases)
    func aDeleteStoreIsCarriedOutRemotelyAndTheDeviceSyncsAfterTheGrant(_ setup: Setup) async throws {
        try await withCluster(setup.settings()) { cluster in
            try await cluster.admin(["grant", "device", "p", "readwrite"])
            try await cluster.admin(["grant", "device", "q", "readwrite"])
            try await cluster.admin(["revoke", "device", "*"])
            let till = try cluster.agent(
                "a", partitions: ["p", "q"], extra: "[device]\nname = \"till-a\"\nreport_interval_seconds = 1",
                url: cluster.url(instance: setup.deviceInstance))
            try await till.start()
            try await till.waitSynced("p")
            try await till.waitSynced("q")
            try await till.sql("q", "INSERT INTO orders (id, customer, total) VALUES ('q1', 'c', 1)")
            try await till.waitSynced("q")

            // Access to q revoked: a delete-store waits for an operator.
            try await cluster.admin(["revoke", "device", "q"])
            try await eventually("q waits (delete-store)", timeout: .seconds(60)) { try await till.status("q")?["state"] == "reset-pending" }
            let id = try await Self.ask(cluster, ["till-a", "initiate-reset", "--partition", "q"])
            #expect(try await Self.ended(cluster, "till-a", id: id)["state"] == "done")
            try await eventually("q's delete-store carried out", timeout: .seconds(60)) {
                try await till.ctl(["resets", "--json"]).standardOutput.contains("\"deleted\"")
            }
            // Granted again: the emptied store takes the server's state.
            try await cluster.admin(["grant", "device", "q", "readwrite"])
            try await till.waitSynced("q", timeout: 90)
            #expect(try await till.rows("q").contains("q1"))
        }
    }

    @Test(arguments: Setup.allCases)
    func anActionForAnOfflineDeviceRunsWhenItConnectsAndAnUnansweredOneExpires(_ setup: Setup) async throws {
        try await withCluster(setup.settings()) { cluster in
            let till = try cluster.agent(
                "d", partitions: ["p"], extra: "[device]\nname = \"till-d\"\nreport_interval_seconds = 1",
                url: cluster.url(instance: setup.deviceInstance))
            try await till.start()
            try await till.waitSynced("p")
            try await eventually("the device in the ledger", timeout: .seconds(30)) {
                try await Self.reportedActions(cluster, "till-d")?["accepts"] != nil
            }
            await till.stop()

            // Queued while it is away: it expires (action_expire_after_seconds = 15).
            let lost = try await Self.ask(cluster, ["till-d", "diagnostics"])
            let expired = try await Self.ended(cluster, "till-d", id: lost, timeout: 90)
            #expect(expired["state"] == "expired" && expired["message"]?.stringValue?.contains("did not connect") == true, "\(expired)")
            #expect(try await cluster.admin(["audit"]).contains("device.action-expired"))

            // Queued while it is away, and it comes back in time: it runs when it connects.
            let waiting = try await Self.ask(cluster, ["till-d", "retry-now"])
            #expect(try await Self.action(cluster, "till-d", id: waiting)?["state"] == "queued")
            try await till.start()
            #expect(try await Self.ended(cluster, "till-d", id: waiting)["state"] == "done")
            try await till.waitSynced("p")
        }
    }
}
