import TetherControl
import TetherProtocol

extension RemoteActionDecision {
    /// What the server is told of an action run as `response` says: `done` with a short
    /// message from the result; `refused` when the device's state or names refuse it (a
    /// partition it does not sync, a bad request, no reset waiting to be initiated); `failed`
    /// otherwise. A diagnostics report travels as its JSON.
    static func result(for action: RemoteAction, response: ControlResponse) -> RemoteActionResult {
        guard response.ok else {
            let message = response.error ?? "the action failed"
            let refused = response.code == .unknownPartition || response.code == .badRequest || Self.isNothingToInitiate(message)
            return RemoteActionResult(id: action.id, outcome: refused ? .refused : .failed, message: RemoteActionResult.sendable(message))
        }
        let result = response.result ?? .null
        if action.kind == .diagnostics {
            let report = DiagnosticsBounds.bytes(result)
            guard report.count <= ProtocolLimits.maxActionReportBytes else {
                return RemoteActionResult(
                    id: action.id, outcome: .failed,
                    message: "the diagnostics report is \(report.count) bytes, more than \(ProtocolLimits.maxActionReportBytes)")
            }
            // The agent's own report: it decodes; were it not to, the message says so.
            let events = (try? result.decode(as: DiagnosticsReport.self)).map { "\($0.events.count) events" } ?? "unreadable"
            return RemoteActionResult(id: action.id, outcome: .done, message: "diagnostics report of \(report.count) bytes (\(events))", report: report)
        }
        return RemoteActionResult(id: action.id, outcome: .done, message: RemoteActionResult.sendable(doneMessage(action, result)))
    }

    /// The agent's refusals of `reset-initiate` when no reset waits (`tetherctl` exits 1 on
    /// them, as on a failure): nothing was tried, so the device refuses.
    static func isNothingToInitiate(_ message: String) -> Bool {
        message.hasPrefix("no reset to initiate") || message.hasPrefix("nothing to initiate")
    }

    /// One line of what was done (the command's result; the kind's name when it cannot be read).
    private static func doneMessage(_ action: RemoteAction, _ result: JSONValue) -> String {
        switch action.kind {
        case .initiateReset:
            // Each result is the agent's own report of the command; an unreadable one is named plainly.
            guard let report = try? result.decode(as: ResetInitiatedReport.self) else { return "reset initiated" }
            return "reset \(report.id) of \(report.partition) initiated" + (report.outcome == "initiated" ? "" : ": \(report.outcome)")
        case .pause, .resume:
            // As above: the agent's own report, or a plain word.
            guard let report = try? result.decode(as: PartitionStateReport.self) else { return action.kind == .pause ? "paused" : "resumed" }
            return "\(report.partition) \(action.kind == .pause ? "paused" : "resumed") (state \(report.state))"
        case .retryNow:
            // As above: the agent's own report, or a plain word.
            guard let report = try? result.decode(as: RetryNowReport.self) else { return "retrying now" }
            let connection = report.connection ? "reconnecting now" : "the connection was not backing off"
            return "\(connection); binding again: \(report.partitions.isEmpty ? "none" : report.partitions.joined(separator: ", "))"
        default:
            return "\(action.kind) done"
        }
    }
}
