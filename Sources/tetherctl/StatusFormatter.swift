import Foundation
import TetherControl
import TetherProtocol

/// Human-readable tables for `tetherctl status` and `tetherctl resets`. Every text the agent
/// reports (which holds what the server said: its software string, error messages, reasons)
/// is shown through ``TerminalText`` (`safe`): a control character is printed escaped, so a
/// server can neither write terminal escapes nor forge a line.
enum StatusFormatter {
    private static func safe(_ text: String) -> String { TerminalText.safe(text) }

    /// The connection line, then the partitions' table.
    static func status(_ report: StatusReport) -> String {
        var lines: [String] = []
        if let agent = report.agent {
            lines.append(
                "tetherd \(safe(agent.release)) (sync protocol \(agent.syncProtocol), control protocol \(agent.controlProtocol)), device \(safe(agent.deviceName))"
                    + (agent.deviceID.map { " (\(safe(String($0.prefix(8)))))" } ?? ""))
        }
        if let connection = report.connection {
            var line = "server \(safe(connection.serverURL)): "
            if connection.connected {
                line += "connected since \(safe(connection.connectedSince ?? "-"))"
                if let software = connection.serverSoftware { line += ", \(safe(software))" }
                if let version = connection.syncProtocol { line += " speaking sync protocol \(version)" }
            } else {
                line += "not connected"
            }
            lines.append(line)
        }
        return (lines + [table(report.partitions)]).joined(separator: "\n")
    }

    static func table(_ partitions: [PartitionReport]) -> String {
        guard !partitions.isEmpty else { return "no partitions configured" }
        var rows = [["PARTITION", "STATE", "SERVER VERSION", "UNSYNCED", "PENDING RESET", "LAST ERROR"]]
        var notes: [String] = []
        for p in partitions {
            if let reason = p.pendingResetReason {
                notes.append("\(safe(p.name)): reset \(safe(p.pendingReset ?? "-")) waits for an operator: \(safe(reason))")
            }
            var state = p.state
            if let download = p.download {
                state += " (\(download.rowsDone)/\(download.rowsTotal) rows"
                if download.rowsPerSecond > 0 { state += ", \(Int(download.rowsPerSecond)) rows/s" }
                state += ")"
            }
            let error = p.lastError.map { "\($0.code) \($0.message) (\($0.at))" } ?? "-"
            rows.append([p.name, state, String(p.serverVersion), String(p.unsyncedChanges), p.pendingReset ?? "-", error])
        }
        return ([render(rows)] + notes).joined(separator: "\n")
    }

    static func resets(_ report: ResetsReport) -> String {
        let resets = report.resets
        guard !resets.isEmpty else { return "no client resets" }
        var lines: [String] = []
        var rows = [["ID", "PARTITION", "ERROR", "MODE", "OUTCOME", "PHASE", "STARTED", "FINISHED"]]
        for r in resets {
            rows.append([r.id, r.partition, String(r.errorCode), r.mode, r.outcome, r.phase, r.startedAt, r.finishedAt ?? "-"])
        }
        lines.append(render(rows))
        for r in resets {
            let kept = r.quarantined ? "damaged store quarantined at" : "backup"
            lines.append("\(safe(r.id)): \(kept) \(safe(r.backupPath))")
            for hook in r.hooks { lines.append("  \(safe(hook.event)): \(safe(hook.result)) at \(safe(hook.finishedAt))") }
            if let reason = r.fallbackReason { lines.append("  fell back: \(safe(reason))") }
            if let cause = r.cause { lines.append("  cause: \(safe(cause)) (\(safe(r.errorMessage)))") }
            if let healed = r.healedChanges { lines.append("  healed: \(healed) changes given back to the restored server") }
        }
        return lines.joined(separator: "\n")
    }

    /// The rows as a table; every cell shown safe.
    private static func render(_ rows: [[String]]) -> String {
        let rows = rows.map { $0.map(safe) }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n")
    }
}
