import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// The server's device ledger with real agents and servers (issue 37, docs/server.md "Device
/// ledger"): devices appear when they bind, say when they wait for an operator's reset, and
/// are seen through either instance of a shared PostgreSQL.
@Suite(.timeLimit(.minutes(5)))
struct DeviceLedgerEndToEndTests {
    /// The ledger as `admin devices --json` gives it, through `instance`.
    static func ledger(_ cluster: Cluster, _ arguments: [String] = [], instance: Int = 0) async throws -> [JSONValue] {
        let text = try await cluster.admin(["devices", "--json"] + arguments, instance: instance)
        return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))["devices"]?.arrayValue ?? []
    }

    static func entry(_ devices: [JSONValue], name: String, partition: String = "p") -> JSONValue? {
        devices.first { $0["device_name"]?.stringValue == name && $0["partition"]?.stringValue == partition }
    }

    enum Setup: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgresqlTwoInstances
        var testDescription: String { rawValue }
        var settings: ClusterSettings {
            switch self {
            case .sqlite: ClusterSettings(serverExtra: "public_metrics = true")
            case .postgresqlTwoInstances: ClusterSettings(serverExtra: "public_metrics = true", storage: .postgresql, instances: 2)
            }
        }
    }

    @Test(arguments: Setup.allCases)
    func devicesAppearAndTheirResetsAndWaitsShow(_ setup: Setup) async throws {
        try await withCluster(setup.settings) { cluster in
            let other = setup == .sqlite ? 0 : 1
            let a = try cluster.agent("a", partitions: ["p", "q"], extra: "[device]\nname = \"till a (shop 1)\"\nreport_interval_seconds = 1")
            let b = try cluster.agent(
                "b", partitions: ["p"], extra: "[device]\nname = \"till-b\"\nreport_interval_seconds = 1\n[reset]\nmode = \"manual\"",
                url: cluster.url(instance: other))
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")

            // Both devices, each partition, as they last said, through either instance.
            try await eventually("both devices synced in the ledger", timeout: .seconds(30)) {
                let devices = try await Self.ledger(cluster, instance: other)
                return ["till a (shop 1)", "till-b"].allSatisfy { Self.entry(devices, name: $0)?["state"]?.stringValue == "synced" }
                    && Self.entry(devices, name: "till a (shop 1)", partition: "q") != nil
            }
            let devices = try await Self.ledger(cluster)
            let entryA = try #require(Self.entry(devices, name: "till a (shop 1)"))
            #expect(entryA["user"]?.stringValue == "device")
            #expect(entryA["release"]?.stringValue == "0.1.0")
            #expect(entryA["device_id"]?.stringValue?.count == 32)
            #expect(entryA["client_file"]?.numberValue ?? 0 > 0)
            #expect(entryA["stale"] == .bool(false) && entryA["wedged"] == .bool(false))
            #expect(Self.entry(devices, name: "till-b")?["device_id"] != entryA["device_id"])

            // Sync terminated and enabled again: every client file is gone, a recovers, b (manual) waits.
            try await cluster.admin(["terminate-sync"])
            try await cluster.admin(["enable-sync"])
            try await eventually("b waits for its reset in the ledger", timeout: .seconds(60)) {
                Self.entry(try await Self.ledger(cluster), name: "till-b")?["state"]?.stringValue == "reset-pending"
            }
            let waiting = try #require(Self.entry(try await Self.ledger(cluster, ["--state", "reset-pending"]), name: "till-b"))
            #expect(waiting["pending_reset"]?.stringValue?.isEmpty == false)
            #expect(waiting["last_error_code"]?.numberValue == 208)
            try await eventually("a's recovered resets in the ledger", timeout: .seconds(60)) {
                Self.entry(try await Self.ledger(cluster), name: "till a (shop 1)")?["resets"]?["recovered"]?.numberValue == 1
            }
            let text = try await cluster.admin(["devices", "--state", "reset-pending"])
            #expect(text.contains("till-b") && text.contains("pending: ") && !text.contains("till a"), "\(text)")
            #expect(try await Self.ledger(cluster, ["--partition", "q"]).count == 1)
            #expect(try await Self.ledger(cluster, ["--stale", "1h"]).isEmpty)

            // Counts by state on /metrics (counted every 5 s), no device names.
            try await eventually("the ledger counted on /metrics", timeout: .seconds(30)) {
                try HTTPGet.get(port: cluster.ports[other], path: "/metrics").body.contains("tether_server_devices{state=\"reset-pending\"} 1")
            }
            let metrics = try HTTPGet.get(port: cluster.ports[other], path: "/metrics").body
            #expect(metrics.contains("tether_server_devices_wedged 0") && metrics.contains("tether_server_devices_stale 0"))
            #expect(!metrics.contains("till-b"))

            // The operator carries it out: the ledger hears of it.
            #expect(try await b.ctl(["reset", "initiate", "p"]).status == 0)
            try await eventually("b's manual reset done in the ledger", timeout: .seconds(60)) {
                let entry = Self.entry(try await Self.ledger(cluster), name: "till-b")
                return entry?["resets"]?["manual-done"]?.numberValue == 1 && entry?["pending_reset"] == nil
            }
        }
    }

    /// A bad `--stale` or `--state` is a usage error (exit 2, naming the option), and the ledger of a new server is empty.
    @Test func badFiltersAreRefusedAndAnEmptyLedgerSaysSo() async throws {
        try await withCluster { cluster in
            // The ledger's part of the answer (the identities, when the server keeps them, come before it).
            let devices = try await cluster.admin(["devices"])
            #expect(devices == "no devices have reported yet" || devices.hasSuffix("\n\nno devices have reported yet"), "\(devices)")
            for arguments in [["--stale", "5x"], ["--state", "happy"]] {
                let result = try await ChildProcess.run(
                    try BuiltProducts.executable("tether-server"),
                    ["admin", "--url", cluster.adminURL(), "--token-file", cluster.dir.appending("admin.token"), "devices"]
                        + arguments)
                #expect(result.status == 2 && result.standardError.contains(arguments[0]), "\(arguments): \(result)")
            }
        }
    }
}
