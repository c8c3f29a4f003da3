import Foundation
import Logging
import Testing
import TetherProtocol
@testable import TetherServer
import TetherTOML
import TetherTestSupport

@Suite struct ServerMetricsTests {
    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func countersGaugesAndTheHistogramAreExposed() {
        let metrics = ServerMetrics()
        let empty = metrics.exposition(.init(connectedDevices: 0, boundSessions: 0, syncEnabled: true, partitionVersions: [:]))
        #expect(Self.value(empty, "tether_server_connected_devices") == 0)
        #expect(Self.value(empty, "tether_server_changes_integrated_total") == 0)

        metrics.integrated(changes: 3, duration: .milliseconds(3))
        metrics.integrated(changes: 2, duration: .milliseconds(30))
        metrics.received(bytes: 100)
        metrics.sent(bytes: 40)
        metrics.sent(bytes: 2)
        metrics.syncError(SyncErrorCode(222))
        metrics.syncError(SyncErrorCode(222))
        metrics.syncError(SyncErrorCode(203))
        let text = metrics.exposition(.init(
            connectedDevices: 4, boundSessions: 7, syncEnabled: false, partitionVersions: ["store-17": 12, "catalog": 3]))
        #expect(Self.value(text, "tether_server_connected_devices") == 4)
        #expect(Self.value(text, "tether_server_bound_sessions") == 7)
        #expect(Self.value(text, "tether_server_sync_enabled") == 0)
        #expect(Self.value(text, "tether_server_changes_integrated_total") == 5)
        #expect(Self.value(text, "tether_server_upload_bytes_total") == 100)
        #expect(Self.value(text, "tether_server_download_bytes_total") == 42)
        #expect(Self.value(text, #"tether_server_sync_errors_total{code="222"}"#) == 2)
        #expect(Self.value(text, #"tether_server_sync_errors_total{code="203"}"#) == 1)
        #expect(Self.value(text, #"tether_server_partition_version{partition="store-17"}"#) == 12)
        #expect(Self.value(text, "tether_server_integrate_duration_seconds_count") == 2)
        #expect(Self.value(text, #"tether_server_integrate_duration_seconds_bucket{le="0.005"}"#) == 1)
        #expect(Self.value(text, #"tether_server_integrate_duration_seconds_bucket{le="0.05"}"#) == 2)
        #expect(text.contains("# TYPE tether_server_integrate_duration_seconds histogram"))
        #expect(text.contains("# TYPE tether_server_sync_errors_total counter"))
    }

    /// `tether_server_devices{state}` has the fixed states only: whatever the ledger counts, a
    /// state an agent does not have is `other`, and no series is made of it (issue 46).
    @Test func deviceStatesAreAFixedSetOfLabels() {
        let metrics = ServerMetrics()
        var byState = ["synced": 2, "reset-pending": 1, "other": 1]
        for n in 0..<3000 { byState["evil-\(n)"] = 1 }
        let text = metrics.exposition(.init(
            connectedDevices: 0, boundSessions: 0, syncEnabled: true, partitionVersions: [:], devices: DeviceCounts(byState: byState)))
        let series = text.split(separator: "\n").filter { $0.hasPrefix("tether_server_devices{") }
        #expect(series.count == 9, "\(series)")
        for state in ["connecting", "offline", "paused", "resetting", "stopped", "syncing"] {
            #expect(Self.value(text, "tether_server_devices{state=\"\(state)\"}") == 0)
        }
        #expect(Self.value(text, #"tether_server_devices{state="synced"}"#) == 2)
        #expect(Self.value(text, #"tether_server_devices{state="reset-pending"}"#) == 1)
        #expect(Self.value(text, #"tether_server_devices{state="other"}"#) == 3001)
        #expect(!text.contains("evil"))
        // The next scrape has the same series, with the new counts.
        let later = metrics.exposition(.init(
            connectedDevices: 0, boundSessions: 0, syncEnabled: true, partitionVersions: [:], devices: DeviceCounts(byState: ["synced": 1])))
        #expect(later.split(separator: "\n").filter { $0.hasPrefix("tether_server_devices{") }.count == 9)
        #expect(Self.value(later, #"tether_server_devices{state="other"}"#) == 0)
    }

    /// The ledger keeps a state an agent does not have as `other` (a newer agent's state is
    /// still seen, as `other`).
    @Test func aReportedStateOutsideTheAgentsIsKeptAsOther() {
        let report = DeviceReport(token: "t", deviceID: "d", deviceName: "n", release: "r", entries: [
            .init(partition: "p", state: "synced"), .init(partition: "q", state: "evil\u{2603}"), .init(partition: "r", state: "reset-pending"),
        ])
        let entries = DeviceLedgerEntry.entries(of: report, user: "u", receivedAt: Date())
        #expect(entries.map(\.state) == ["synced", "other", "reset-pending"])
    }

    @Test func metricsListenIsOptional() throws {
        let base = "admin_token_file = \"/a\"\n"
        #expect(try ServerConfiguration.parse(toml: base, file: "f.toml").metricsListen == nil)
        let config = try ServerConfiguration.parse(toml: base + "metrics_listen = \"0.0.0.0:9800\"\n", file: "f.toml")
        #expect(config.metricsListen == ListenAddress(host: "0.0.0.0", port: 9800))
        do {
            _ = try ServerConfiguration.parse(toml: base + "metrics_listen = \"9800\"\n", file: "f.toml")
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.description) == ["f.toml:2: metrics_listen: \"9800\" is not host:port (port 0-65535)"])
        }
    }
}

@Suite struct HealthCheckTests {
    @Test func healthyWhileTheStorageAnswersThenAOneLineReason() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = try SQLiteServerStorage(directory: dir.path)
        let policy = ServerPolicy(
            users: UserDirectory(entries: []), adminToken: TokenDigest(token: "a"), configuredGrants: [], runtimeGrants: [],
            flags: ServerFlags(), configuredRecovery: true, schemas: SchemaRegistry(history: [SchemaRecord(schema: Schema(version: 1, tables: []), isBreaking: false, appliedAt: Date())]))
        let hub = SyncHub()
        let service = SyncService(
            storage: StorageRoles(storage), hub: hub, policy: policy, now: { Date() }, logger: Logger(label: "test"))
        let healthy = await service.health()
        #expect(healthy.ok && healthy.line == "ok")
        let text = service.metrics.exposition(await service.metricsSnapshot())
        #expect(text.contains("tether_server_sync_enabled 1"))
        try await storage.close()
        let broken = await service.health()
        #expect(!broken.ok)
        #expect(broken.line.hasPrefix("storage unavailable: ") && !broken.line.contains("\n"), "\(broken.line)")
    }
}
