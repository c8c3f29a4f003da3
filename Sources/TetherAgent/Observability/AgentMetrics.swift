import Foundation
import Prometheus
import Synchronization
import TetherControl
import TetherProtocol
import TetherSystemd

/// The agent's metrics (docs/operations.md, "Metrics") for `tetherctl metrics` and
/// `metrics_textfile`. Each exposition is rendered by swift-prometheus from a fresh registry
/// filled with the current partition statuses, the reset records of the state database (so
/// reset and hook counts survive restarts) and the connection events counted here; a
/// partition removed by a reload therefore disappears from the next exposition.
///
/// Labels are partition names from the configuration, reset outcomes, hook events and hook
/// results: never a token or row contents.
package final class AgentMetrics: Sendable {
    private struct Connection {
        var connectedSince: Date?
        var reconnects = 0
        var lastSynced: [PartitionName: Date] = [:]
        /// Error hook runs since the start, by result.
        var errorHookRuns: [String: Int] = [:]
        /// Sync errors since the start, by action.
        var syncErrors: [String: Int] = [:]
        /// Stores whose identity was forgotten at this start (the machine id changed).
        var identitiesForgotten: [PartitionName: Int] = [:]
    }

    private let state = Mutex(Connection())

    package init() {}

    /// The WebSocket connection to the server is up.
    func connected(at time: Date) { state.withLock { $0.connectedSince = time } }

    /// The connection ended (or an attempt failed) and the agent will connect again.
    func disconnected(reconnecting: Bool) {
        state.withLock {
            $0.connectedSince = nil
            if reconnecting { $0.reconnects += 1 }
        }
    }

    /// A run of the error hook ended (`result`: one of ``hookResults``).
    func errorHookRan(_ result: HookResult) { state.withLock { $0.errorHookRuns[Self.label(result), default: 0] += 1 } }

    /// The agent met a sync error that asks for `action`.
    func syncErrorMet(action: String) { state.withLock { $0.syncErrors[action, default: 0] += 1 } }

    /// The store of `partition` forgot its sync identity (the machine id changed).
    func identityForgotten(_ partition: PartitionName) { state.withLock { $0.identitiesForgotten[partition, default: 0] += 1 } }

    /// Since when the current connection is up; nil while not connected.
    var connectedSince: Date? { state.withLock { $0.connectedSince } }

    /// Remembers when each partition was last seen synced.
    func observe(_ statuses: [PartitionStatus], at time: Date) {
        state.withLock { state in
            for status in statuses where status.isSynced { state.lastSynced[status.name] = time }
        }
    }

    /// What one exposition is made of.
    package struct Inputs: Sendable {
        package var statuses: [PartitionStatus]
        package var resets: [ResetRecord]
        package var now: Date
        /// This process' `process_*` figures (nil: not shown).
        package var process: ProcessStatistics?
        package init(statuses: [PartitionStatus], resets: [ResetRecord], now: Date, process: ProcessStatistics? = ProcessStatistics.current()) {
            self.statuses = statuses
            self.resets = resets
            self.now = now
            self.process = process
        }
    }

    /// The Prometheus text format of every agent metric.
    package func exposition(_ inputs: Inputs) -> String {
        observe(inputs.statuses, at: inputs.now)
        let connection = state.withLock { $0 }
        let registry = PrometheusCollectorRegistry()
        func gauge(_ name: String, _ labels: [(String, String)] = []) -> Gauge {
            registry.makeGauge(descriptor: Self.descriptor(name), labels: labels)
        }
        func counter(_ name: String, _ labels: [(String, String)] = []) -> Counter {
            registry.makeCounter(descriptor: Self.descriptor(name), labels: labels)
        }
        let configured = Set(inputs.statuses.map(\.name))
        for status in inputs.statuses {
            let partition = ("partition", status.name.rawValue)
            for state in PartitionState.allCases {
                gauge("tether_agent_partition_state", [partition, ("state", state.rawValue)]).set(to: status.state == state ? 1.0 : 0.0)
            }
            gauge("tether_agent_unsynced_changes", [partition]).set(to: Double(status.unsyncedChanges))
            gauge("tether_agent_server_version", [partition]).set(to: Double(status.serverVersion))
            gauge("tether_agent_latest_server_version", [partition]).set(to: Double(status.latestServerVersion))
            gauge("tether_agent_reset_pending", [partition]).set(to: status.pendingReset == nil ? 0.0 : 1.0)
            gauge("tether_agent_last_synced_timestamp_seconds", [partition])
                .set(to: connection.lastSynced[status.name].map { $0.timeIntervalSince1970 } ?? 0)
            // Every outcome from the first scrape on, so that increase() sees the first reset.
            for outcome in ResetOutcome.allCases {
                _ = counter("tether_agent_resets_total", [partition, ("outcome", outcome.rawValue)])
            }
            for cause in LineageCause.allCases {
                _ = counter("tether_agent_lineage_events_total", [partition, ("cause", cause.rawValue)])
            }
            if let forgotten = connection.identitiesForgotten[status.name] {
                counter("tether_agent_lineage_events_total", [partition, ("cause", LineageCause.machineChanged.rawValue)])
                    .increment(by: Int64(forgotten))
            }
        }
        for event in HookEvent.allCases {
            for result in Self.hookResults {
                _ = counter("tether_agent_hook_runs_total", [("hook", event.rawValue), ("result", result)])
            }
        }
        // The error hook's runs are counted since the start (they are not in reset records).
        for (result, count) in connection.errorHookRuns {
            counter("tether_agent_hook_runs_total", [("hook", HookEvent.syncError.rawValue), ("result", result)]).increment(by: Int64(count))
        }
        for action in Self.errorActions {
            counter("tether_agent_sync_errors_total", [("action", action)]).increment(by: Int64(connection.syncErrors[action] ?? 0))
        }
        for record in inputs.resets where configured.contains(record.partition) {
            counter("tether_agent_resets_total", [("partition", record.partition.rawValue), ("outcome", record.outcome.rawValue)]).increment()
            if let cause = record.cause {
                counter("tether_agent_lineage_events_total", [("partition", record.partition.rawValue), ("cause", cause.rawValue)]).increment()
            }
            for run in record.hooks {
                counter("tether_agent_hook_runs_total", [("hook", run.event.rawValue), ("result", Self.label(run.result))]).increment()
            }
        }
        gauge("tether_agent_connected").set(to: connection.connectedSince == nil ? 0.0 : 1.0)
        gauge("tether_agent_connected_since_timestamp_seconds").set(to: connection.connectedSince?.timeIntervalSince1970 ?? 0)
        counter("tether_agent_reconnects_total").increment(by: Int64(connection.reconnects))
        gauge("tether_agent_partitions").set(to: Double(inputs.statuses.count))
        gauge("tether_build_info", [
            ("program", "tetherd"), ("release", TetherVersion.release), ("sync_protocol", String(TetherVersion.syncProtocol)),
            ("control_protocol", String(ControlProtocol.version)),
        ]).set(to: 1)
        return registry.emitToString() + (inputs.process?.exposition ?? "")
    }

    static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "")
    }

    static let hookResults = ["succeeded", "failed", "killed", "timed-out", "not-started"]
    /// `TETHER_ERROR_ACTION`'s values.
    static let errorActions = ["retry", "reauth", "client_reset", "client_reset_no_recovery", "delete_store", "fatal", "transient"]

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
        "tether_build_info": "1, labelled with the program, its release and the sync and control protocols it speaks",
        "tether_agent_partition_state": "1 for the partition's current state, 0 for the others",
        "tether_agent_unsynced_changes": "Local changes not yet acknowledged by the server",
        "tether_agent_server_version": "Server version the partition's store holds",
        "tether_agent_latest_server_version": "Newest server version the server has announced to the partition",
        "tether_agent_reset_pending": "1 while a reset waits for an operator",
        "tether_agent_last_synced_timestamp_seconds": "Unix time the partition was last seen synced; 0 if not since tetherd started",
        "tether_agent_resets_total": "Client resets recorded in the state database, by outcome",
        "tether_agent_hook_runs_total": "Hook runs by hook and result: reset hooks as recorded in the state database, the error hook (sync-error) since the start",
        "tether_agent_sync_errors_total": "Sync errors met since the start, by the action they ask for (transient: a transport failure)",
        "tether_agent_connected": "1 while the WebSocket connection to the server is up",
        "tether_agent_connected_since_timestamp_seconds": "Unix time the current connection came up; 0 while not connected",
        "tether_agent_reconnects_total": "Connection attempts after a failed attempt or a lost connection since tetherd started",
        "tether_agent_partitions": "Configured partitions",
        "tether_agent_lineage_events_total":
            "Stores found restored from an older copy (store-regressed) or synced from two places (store-cloned), as resets recorded in the state database, and identities forgotten since the start because the machine id changed (machine-changed)",
    ]
}
