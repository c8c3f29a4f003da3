import Foundation
import TetherControl
import TetherProtocol
import TetherSyncClient

extension SyncAgent {
    /// The agent's metrics in the Prometheus text format (`tetherctl metrics`, `metrics_textfile`).
    /// Throws when the state database cannot be read: the reset counts would otherwise show
    /// zero, which a dashboard cannot tell from "no resets".
    package func metricsExposition(now: Date = Date()) async throws -> String {
        let resets = try stateDatabase.resets()
        var current = await statuses()
        let configuration = await partitions.configuration()
        // Before the sessions start (the first textfile write) every configured partition is
        // still connecting: show it so, rather than not at all.
        for settings in configuration.partitions where !current.contains(where: { $0.name == settings.name }) {
            current.append(PartitionStatus(name: settings.name, state: .connecting))
        }
        return metrics.exposition(AgentMetrics.Inputs(statuses: current, resets: resets, now: now))
    }

    /// `status`'s connection details: the server URL, whether connected and since when.
    func connectionReport() async -> ConnectionReport {
        let since = metrics.connectedSince
        let welcome = since == nil ? nil : await connection.current?.welcome
        return ConnectionReport(
            serverURL: await partitions.configuration().server.url, connected: since != nil,
            connectedSince: since.map { PartitionStatus.iso8601($0.timeIntervalSince1970) }, serverSoftware: welcome?.software,
            syncProtocol: welcome?.protocolVersion)
    }

    /// This agent's release, protocols and device (``AgentReport``).
    func agentReport() async -> AgentReport {
        AgentReport(
            release: TetherVersion.release, syncProtocol: TetherVersion.syncProtocol, controlProtocol: ControlProtocol.version,
            // An unreadable state database: no id shown (the device report loop logs the error).
            deviceName: await partitions.configuration().device.name, deviceID: try? stateDatabase.deviceID())
    }

    /// `metrics_textfile` from the configuration tetherd started with.
    package var metricsTextfile: String? { get async { await partitions.configuration().metricsTextfile } }
}
