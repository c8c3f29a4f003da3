import Foundation
import Testing
import TetherProtocol
import TetherServer
import TetherTestSupport

/// The device ledger as an attacker holding one user's token writes it (issue 46, findings 2
/// and 3; docs/server.md "Device ledger"): reports for partitions the user has no grant on, for
/// another user's device id, and with thousands of made-up states. The ledger keeps none of
/// them, the other user's entries are intact, `/metrics` gains no series.
@Suite struct DeviceLedgerAbuseTests {
    static func report(_ token: String, device: String, _ entries: [DeviceReport.Entry]) -> ClientMessage {
        .report(DeviceReport(token: token, deviceID: device, deviceName: "till", release: "0.1.0", entries: entries))
    }

    /// A wedged-looking entry: changes waiting for a day, never uploaded.
    static func wedged(_ partition: String, state: String = "syncing") -> DeviceReport.Entry {
        DeviceReport.Entry(partition: partition, state: state, unsyncedChanges: 5, unsyncedFor: 86_400)
    }

    @Test func aTokenWritesOnlyItsOwnEntriesOfItsPartitionsWithKnownStates() async throws {
        try await withServer(extraConfig: "public_metrics = true") { server in
            // The partitions exist (devices bound them); pos-17's device reports both.
            for partition in ["store-17", "catalog-1"] {
                _ = try await withConnection(server) { try await TestDevice(partition: partition).bind(on: $0) }
            }
            let victim = ServerProcess.tokens["pos-17"]!
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                try await raw.send(Self.report(victim, device: "victim", [
                    .init(partition: "store-17", state: "synced"), .init(partition: "catalog-1", state: "synced"),
                ]))
                try await raw.send(.ping(1))
                _ = try await raw.receive { if case .pong(1) = $0 { true } else { nil } }
            }
            // A connection's reports are kept before the next message is read: the pong says so.
            #expect(try await server.admin.devices().devices.count == 2)

            // The attacker holds the token of `reader` (granted catalog-* to read, nothing else).
            let attacker = ServerProcess.tokens["reader"]!
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                // The victim's device id, on a partition the attacker has no grant on and one it has.
                try await raw.send(Self.report(attacker, device: "victim", [Self.wedged("store-17"), Self.wedged("catalog-1")]))
                // 3,000 made-up states: on partitions it has no grant on, on partitions its glob
                // matches but the server does not have, and on the one it may read.
                for batch in 0..<3 {
                    try await raw.send(Self.report(attacker, device: "attacker", (0..<1000).map { i in
                        Self.wedged("store-\(1000 + batch * 1000 + i)", state: "evil-\(batch * 1000 + i)")
                    }))
                }
                for batch in 0..<3 {
                    try await raw.send(Self.report(attacker, device: "attacker", (0..<1000).map { i in
                        Self.wedged("catalog-x\(batch * 1000 + i)", state: "evil-\(batch * 1000 + i)")
                    }))
                }
                try await raw.send(Self.report(attacker, device: "attacker", [.init(partition: "catalog-1", state: "evil-state")]))
                try await raw.send(.ping(2))
                _ = try await raw.receive { if case .pong(2) = $0 { true } else { nil } }
            }

            let devices = try await server.admin.devices().devices
            // Exactly: the victim's entries as it reported them, still its own; of the
            // attacker's, only entries of the partition it may read, under its own name, with a
            // state from the fixed set.
            let rows = Set(devices.map { "\($0.user) \($0.deviceID) \($0.partition) \($0.state) \($0.unsyncedChanges)" })
            #expect(rows == [
                "pos-17 victim store-17 synced 0", "pos-17 victim catalog-1 synced 0",
                "reader victim catalog-1 syncing 5", "reader attacker catalog-1 other 0",
            ], "\(devices)")

            // /metrics: the fixed states only (the made-up one counted as other), the refusals counted.
            let metrics = try await eventually("the ledger counted on /metrics", timeout: .seconds(30), pollInterval: .milliseconds(200)) { () -> String? in
                let text = try PlainSocket.get(port: server.port, path: "/metrics").body
                return text.contains("tether_server_devices{state=\"other\"} 1") ? text : nil
            }
            let series = metrics.split(separator: "\n").filter { $0.hasPrefix("tether_server_devices{") }
            #expect(series.count == 9, "\(series)")
            #expect(!metrics.contains("evil"))
            #expect(metrics.contains("tether_server_device_reports_refused_total{reason=\"not_granted\"} 3001"))
            #expect(metrics.contains("tether_server_device_reports_refused_total{reason=\"unknown_partition\"} 3000"))
            // Logged with the user and the counts, folded: no partition or state a device named.
            try await eventually("the folded refusals logged when the connection closed", timeout: .seconds(10), pollInterval: .milliseconds(100)) {
                server.log.contains("user reader: 3000 not_granted, 3000 unknown_partition")
            }
            let log = server.log
            #expect(log.contains("user reader: 1 not_granted"), "\(log.suffix(2000))")
            #expect(!log.contains("evil") && !log.contains("store-1000") && !log.contains("catalog-x"))
        }
    }
}
