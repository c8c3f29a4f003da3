import Foundation
import TetherControl
import TetherProtocol

extension SyncAgent {
    /// `diagnostics` (`tetherctl diagnostics`, and a remote `diagnostics` action): the status
    /// as `status` answers it, the last events, the configuration with secrets removed, the
    /// release and uptime — within ``ProtocolLimits/maxActionReportBytes`` (``DiagnosticsBounds``).
    func diagnostics() async -> ControlResponse {
        let statusResponse = await handle(ControlRequest(command: .status))
        // The agent's own status answer always decodes; were it not to, the failure says so.
        guard statusResponse.ok, let statusValue = statusResponse.result, var status = try? statusValue.decode(as: StatusReport.self) else {
            return .failure("the status cannot be read for the report: \(statusResponse.error ?? "an unreadable answer")")
        }
        if var connection = status.connection {
            connection.serverURL = AgentConfiguration.redactedURL(connection.serverURL)
            status.connection = connection
        }
        let configuration = await partitions.configuration()
        let uptime = ContinuousClock.now - startedAt.instant
        let report = DiagnosticsReport(
            release: TetherVersion.release, startedAt: PartitionStatus.iso8601(startedAt.date.timeIntervalSince1970),
            uptimeSeconds: uptime.components.seconds, status: status, configuration: configuration.diagnostics,
            events: Array(events.log.recent().suffix(DiagnosticsBounds.maxEvents)))
        guard let fitted = DiagnosticsBounds.fitted(report) else {
            return .failure(
                "the diagnostics report is larger than \(ProtocolLimits.maxActionReportBytes) bytes even without events (\(status.partitions.count) partitions); use tetherctl status on the device")
        }
        return .success(fitted)
    }
}
