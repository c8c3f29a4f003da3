import Foundation
import Synchronization
import Prometheus
import TetherProtocol
import TetherSystemd

/// The server's metrics (docs/server.md, "Metrics"): counters and the integrate latency
/// histogram are swift-prometheus instruments (each family with its help text) recorded where
/// the work happens; the gauges
/// (connections, sessions, partition versions) are read from the hub and the storage when
/// scraped. Everything goes to one swift-prometheus registry per server, never to the
/// process-wide metrics system, so several servers in one test process stay apart.
///
/// No metric or label carries a token, a user's secret or row contents: labels are error
/// codes and partition names.
package final class ServerMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let changesIntegrated: Prometheus.Counter
    private let uploadBytes: Prometheus.Counter
    private let downloadBytes: Prometheus.Counter
    private let integrateDuration: DurationHistogram
    /// Reads the sync listener's unauthenticated bytes, for `tether_server_unauthenticated_bytes`.
    private let unauthenticatedBytes = Mutex<(@Sendable () -> Int)?>(nil)

    /// Integrate latency buckets: from a fraction of a millisecond to several seconds.
    static let integrateBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    package init() {
        registry = PrometheusCollectorRegistry()
        changesIntegrated = registry.makeCounter(descriptor: Self.descriptor("tether_server_changes_integrated_total"))
        uploadBytes = registry.makeCounter(descriptor: Self.descriptor("tether_server_upload_bytes_total"))
        downloadBytes = registry.makeCounter(descriptor: Self.descriptor("tether_server_download_bytes_total"))
        integrateDuration = registry.makeDurationHistogram(
            descriptor: Self.descriptor("tether_server_integrate_duration_seconds"), labels: [], buckets: Self.integrateBuckets)
        // Present from the first scrape, before the first sync.
        for name in [
            "tether_server_connected_devices", "tether_server_bound_sessions", "tether_server_sync_enabled",
            "tether_server_unauthenticated_bytes",
        ] {
            _ = gauge(name)
        }
        gauge("tether_build_info", [
            ("program", "tether-server"), ("release", TetherVersion.release), ("sync_protocol", String(TetherVersion.syncProtocol)),
        ]).set(to: 1)
        _ = counter("tether_server_heals_detected_total")
        for limit in ConnectionLimit.allCases { _ = limitedCounter(limit) }
        for outcome in HealReply.Outcome.allCases { _ = healChunkCounter(outcome) }
        for reason in DeviceLedgerIntake.Refusal.allCases { _ = refusedCounter(reason) }
        for (label, key, values) in [
            ("tether_server_state_downloads_total", "source", ["file", "rows"]),
            ("tether_server_ready_file_builds_total", "from", ["rows", "previous"]),
        ] {
            for value in values { _ = counter(label, [(key, value)]) }
        }
    }

    /// Changesets accepted into a partition's history by one upload.
    func integrated(changes: Int, duration: Duration) {
        if changes > 0 { changesIntegrated.increment(by: Int64(changes)) }
        integrateDuration.record(duration)
    }

    /// Bytes of sync messages received from devices.
    func received(bytes: Int) { uploadBytes.increment(by: Int64(bytes)) }

    /// Bytes of sync messages sent to devices.
    func sent(bytes: Int) { downloadBytes.increment(by: Int64(bytes)) }

    /// A sync error sent to a device (session- or connection-level).
    func syncError(_ code: SyncErrorCode) {
        counter("tether_server_sync_errors_total", [("code", String(code.rawValue))]).increment()
    }

    /// A heal record opened because a device bound ahead of the history (a restore the server
    /// was not told of).
    func healOpened() {
        counter("tether_server_heals_detected_total").increment()
    }

    /// `tether_server_unauthenticated_bytes` reads `read` (the sync listener's admission) at
    /// each scrape.
    func watchUnauthenticatedBytes(_ read: @escaping @Sendable () -> Int) { unauthenticatedBytes.withLock { $0 = read } }

    /// A connection closed by one of `[limits]`.
    func limited(_ limit: ConnectionLimit) { limitedCounter(limit).increment() }

    private func limitedCounter(_ limit: ConnectionLimit) -> Prometheus.Counter {
        counter("tether_server_connections_limited_total", [("limit", limit.rawValue)])
    }

    /// `count` entries of a device report the ledger did not keep, for `reason`.
    func deviceReportEntriesRefused(_ reason: DeviceLedgerIntake.Refusal, count: Int) {
        if count > 0 { refusedCounter(reason).increment(by: Int64(count)) }
    }

    private func refusedCounter(_ reason: DeviceLedgerIntake.Refusal) -> Prometheus.Counter {
        counter("tether_server_device_reports_refused_total", [("reason", reason.rawValue)])
    }

    /// A state download begun, by what it sends: `file` (a ready file) or `rows`.
    func stateDownload(file: Bool) {
        counter("tether_server_state_downloads_total", [("source", file ? "file" : "rows")]).increment()
    }

    /// A ready file built, `from` rows or from the previous file and the history since.
    func readyFileBuilt(fromRows: Bool) {
        counter("tether_server_ready_file_builds_total", [("from", fromRows ? "rows" : "previous")]).increment()
    }

    /// A heal chunk answered (protocol 4), by its outcome.
    func healChunk(_ outcome: HealReply.Outcome) { healChunkCounter(outcome).increment() }

    private func healChunkCounter(_ outcome: HealReply.Outcome) -> Prometheus.Counter {
        counter("tether_server_heal_chunks_total", [("outcome", outcome.description)])
    }

    /// The values read at scrape time.
    package struct Snapshot: Sendable {
        package var connectedDevices: Int
        package var boundSessions: Int
        package var syncEnabled: Bool
        package var partitionVersions: [String: Int64]
        /// PostgreSQL: state downloads reading and waiting for a slot (nil on SQLite).
        package var stateDownloads: (reading: Int, waiting: Int)?
        /// The device ledger's counts (nil when the storage could not answer).
        package var devices: DeviceCounts?
        package init(
            connectedDevices: Int, boundSessions: Int, syncEnabled: Bool, partitionVersions: [String: Int64],
            stateDownloads: (reading: Int, waiting: Int)? = nil, devices: DeviceCounts? = nil
        ) {
            self.devices = devices
            self.connectedDevices = connectedDevices
            self.boundSessions = boundSessions
            self.syncEnabled = syncEnabled
            self.partitionVersions = partitionVersions
            self.stateDownloads = stateDownloads
        }
    }

    /// The Prometheus text exposition after setting the gauges from `snapshot`.
    package func exposition(_ snapshot: Snapshot) -> String {
        gauge("tether_server_connected_devices").set(to: Double(snapshot.connectedDevices))
        gauge("tether_server_bound_sessions").set(to: Double(snapshot.boundSessions))
        gauge("tether_server_sync_enabled").set(to: snapshot.syncEnabled ? 1.0 : 0.0)
        gauge("tether_server_unauthenticated_bytes").set(to: Double(unauthenticatedBytes.withLock { $0 }?() ?? 0))
        for (partition, version) in snapshot.partitionVersions {
            gauge("tether_server_partition_version", [("partition", partition)]).set(to: Double(version))
        }
        if let downloads = snapshot.stateDownloads {
            gauge("tether_server_state_downloads", [("state", "reading")]).set(to: Double(downloads.reading))
            gauge("tether_server_state_downloads", [("state", "waiting")]).set(to: Double(downloads.waiting))
        }
        if let devices = snapshot.devices {
            // Every state of the fixed set, present at 0 too, so that an alert on one sees it go
            // away; no series is ever made of a string a device sent.
            for (state, count) in Self.deviceGauge(devices.byState) {
                gauge("tether_server_devices", [("state", state)]).set(to: Double(count))
            }
            gauge("tether_server_devices_stale").set(to: Double(devices.staleDevices))
            gauge("tether_server_devices_wedged").set(to: Double(devices.wedged))
        }
        return registry.emitToString() + (ProcessStatistics.current()?.exposition ?? "")
    }

    /// The states of `tether_server_devices`: those an agent reports (docs/operations.md,
    /// "Partition states") and `other`.
    static let deviceStates = DeviceLedgerEntry.states

    /// `tether_server_devices`'s values from the ledger's counts: one per state of
    /// ``deviceStates``, whatever the counts name; a state outside it (a row kept before the
    /// ledger knew its states) counts as `other`.
    static func deviceGauge(_ byState: [String: Int]) -> [(state: String, count: Int)] {
        var counts = Dictionary(uniqueKeysWithValues: deviceStates.map { ($0, 0) })
        for (state, count) in byState { counts[DeviceLedgerEntry.ledgerState(state), default: 0] += count }
        return deviceStates.map { ($0, counts[$0] ?? 0) }
    }

    private func gauge(_ name: String, _ labels: [(String, String)] = []) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: Self.descriptor(name), labels: labels)
    }

    private func counter(_ name: String, _ labels: [(String, String)] = []) -> Prometheus.Counter {
        registry.makeCounter(descriptor: Self.descriptor(name), labels: labels)
    }

    /// Every family has its help text (a test checks `# HELP` and `# TYPE` for each).
    private static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "")
    }

    static let help = [
        "tether_build_info": "1, labelled with the program, its release and the sync protocol it speaks",
        "tether_server_changes_integrated_total": "Changesets accepted into a partition's history",
        "tether_server_upload_bytes_total": "Bytes of sync frames received from devices",
        "tether_server_download_bytes_total": "Bytes of sync messages sent to devices",
        "tether_server_integrate_duration_seconds": "Time to validate and commit one upload in the storage",
        "tether_server_sync_errors_total": "Sync errors sent to devices, by error code",
        "tether_server_heals_detected_total": "Restores found by a device binding ahead of the history (a database put back while the server was stopped)",
        "tether_server_connections_limited_total": "Connections closed by a [limits] limit, by limit",
        "tether_server_state_downloads_total": "State downloads begun (new stores and resets), by source: a ready file or rows",
        "tether_server_ready_file_builds_total": "Ready files built, from rows or from the previous file and the history since",
        "tether_server_heal_chunks_total": "Heal chunks devices sent during their client reset, by the server's answer",
        "tether_server_connected_devices": "Open sync (WebSocket) connections",
        "tether_server_bound_sessions": "Bound sync sessions over all connections",
        "tether_server_sync_enabled": "0 after admin terminate-sync until enable-sync, else 1",
        "tether_server_partition_version": "The partition's latest server version",
        "tether_server_state_downloads": "PostgreSQL: state downloads reading, and waiting for a slot (max_state_downloads)",
        "tether_server_unauthenticated_bytes": "Bytes read from sync-listener connections that have not authenticated yet ([limits])",
        "tether_server_devices": "Device ledger entries (a user's device and a partition) by the state last reported; states an agent does not have count as other",
        "tether_server_device_reports_refused_total":
            "Entries of device reports the ledger did not keep, by reason: not_granted, unknown_partition, quota (max_devices_per_user), full (max_entries)",
        "tether_server_devices_stale": "Devices whose last report is older than [devices] stale_after_seconds",
        "tether_server_devices_wedged":
            "Ledger entries whose unsynced changes have waited longer than [devices] wedged_after_seconds with no upload acknowledged",
    ]

}
