import Foundation
public import Prometheus
import Synchronization
public import TetherProtocol

/// The agent's metrics (docs/operations.md, "Metrics") for `tetherctl metrics` and
/// `metrics_textfile`. Each exposition is rendered by swift-prometheus from a fresh registry
/// filled with the current partition statuses, the reset records of the state database (so
/// reset and hook counts survive restarts) and the connection events counted here; a
/// partition removed by a reload therefore disappears from the next exposition.
///
/// Labels are partition names from the configuration, reset outcomes, hook events and hook
/// results: never a token or row contents.
public final class AgentMetrics: Sendable {
    private struct Connection {
        var connectedSince: Date?
        var reconnects = 0
        var lastSynced: [PartitionName: Date] = [:]
    }

    private let state = Mutex(Connection())

    public init() {}

    /// The WebSocket connection to the server is up.
    func connected(at time: Date) { state.withLock { $0.connectedSince = time } }

    /// The connection ended (or an attempt failed) and the agent will connect again.
    func disconnected(reconnecting: Bool) {
        state.withLock {
            $0.connectedSince = nil
            if reconnecting { $0.reconnects += 1 }
        }
    }

    /// Since when the current connection is up; nil while not connected.
    var connectedSince: Date? { state.withLock { $0.connectedSince } }

    /// Remembers when each partition was last seen synced.
    func observe(_ statuses: [PartitionStatus], at time: Date) {
        state.withLock { state in
            for status in statuses where status.isSynced { state.lastSynced[status.name] = time }
        }
    }

    /// What one exposition is made of.
    public struct Inputs: Sendable {
        public var statuses: [PartitionStatus]
        public var resets: [ResetRecord]
        public var now: Date
        public init(statuses: [PartitionStatus], resets: [ResetRecord], now: Date) {
            self.statuses = statuses
            self.resets = resets
            self.now = now
        }
    }

    /// The Prometheus text format of every agent metric.
    public func exposition(_ inputs: Inputs) -> String {
        observe(inputs.statuses, at: inputs.now)
        let connection = state.withLock { $0 }
        let registry = PrometheusCollectorRegistry()
        let configured = Set(inputs.statuses.map(\.name))
        for status in inputs.statuses {
            let partition = ("partition", status.name.rawValue)
            for state in PartitionState.allCases {
                registry.makeGauge(name: "tether_agent_partition_state", labels: [partition, ("state", state.rawValue)], help: Self.help["state"]!)
                    .set(status.state == state ? 1 : 0)
            }
            registry.makeGauge(name: "tether_agent_unsynced_changes", labels: [partition], help: Self.help["unsynced"]!)
                .set(Double(status.unsyncedChanges))
            registry.makeGauge(name: "tether_agent_server_version", labels: [partition], help: Self.help["version"]!)
                .set(Double(status.serverVersion))
            registry.makeGauge(name: "tether_agent_latest_server_version", labels: [partition], help: Self.help["latest"]!)
                .set(Double(status.latestServerVersion))
            registry.makeGauge(name: "tether_agent_reset_pending", labels: [partition], help: Self.help["pending"]!)
                .set(status.pendingReset == nil ? 0 : 1)
            let synced = connection.lastSynced[status.name].map { $0.timeIntervalSince1970 } ?? 0
            registry.makeGauge(name: "tether_agent_last_synced_timestamp_seconds", labels: [partition], help: Self.help["synced"]!)
                .set(synced)
            // Every outcome from the first scrape on, so that increase() sees the first reset.
            for outcome in ResetOutcome.allCases {
                _ = registry.makeCounter(name: "tether_agent_resets_total", labels: [partition, ("outcome", outcome.rawValue)], help: Self.help["resets"]!)
            }
        }
        for event in HookEvent.allCases {
            for result in Self.hookResults {
                _ = registry.makeCounter(name: "tether_agent_hook_runs_total", labels: [("hook", event.rawValue), ("result", result)], help: Self.help["hooks"]!)
            }
        }
        for record in inputs.resets where configured.contains(record.partition) {
            registry.makeCounter(
                name: "tether_agent_resets_total", labels: [("partition", record.partition.rawValue), ("outcome", record.outcome.rawValue)],
                help: Self.help["resets"]!
            ).increment()
            for run in record.hooks {
                registry.makeCounter(
                    name: "tether_agent_hook_runs_total", labels: [("hook", run.event.rawValue), ("result", Self.label(run.result))],
                    help: Self.help["hooks"]!
                ).increment()
            }
        }
        registry.makeGauge(name: "tether_agent_connected", help: Self.help["connected"]!).set(connection.connectedSince == nil ? 0 : 1)
        registry.makeGauge(name: "tether_agent_connected_since_timestamp_seconds", help: Self.help["since"]!)
            .set(connection.connectedSince?.timeIntervalSince1970 ?? 0)
        registry.makeCounter(name: "tether_agent_reconnects_total", help: Self.help["reconnects"]!).increment(by: Int64(connection.reconnects))
        registry.makeGauge(name: "tether_agent_partitions", help: Self.help["partitions"]!).set(Double(inputs.statuses.count))
        return registry.emitToString()
    }

    static let hookResults = ["succeeded", "failed", "killed", "timed-out", "not-started"]

    static func label(_ result: HookResult) -> String {
        switch result {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .killedBySignal: "killed"
        case .timedOut: "timed-out"
        case .notStarted: "not-started"
        }
    }

    static let help: [String: String] = [
        "state": "1 for the partition's current state, 0 for the others",
        "unsynced": "Local changes not yet acknowledged by the server",
        "version": "Server version the partition's store holds",
        "latest": "Newest server version the server has announced to the partition",
        "pending": "1 while a reset waits for an operator (reset_mode = manual or a failed hook)",
        "synced": "Unix time the partition was last seen synced; 0 if never since tetherd started",
        "resets": "Client resets recorded in the state database, by outcome",
        "hooks": "Reset hook runs recorded in the state database, by hook and result",
        "connected": "1 while the WebSocket connection to the server is up",
        "since": "Unix time the current connection came up; 0 while not connected",
        "reconnects": "Connection attempts after a failed attempt or a lost connection since tetherd started",
        "partitions": "Configured partitions",
    ]
}
