import Foundation
import TetherControl

/// Human-readable tables for `tetherctl status` and `tetherctl resets`.
enum StatusFormatter {
    /// The connection line, then the partitions' table.
    static func status(_ report: StatusReport) -> String {
        var lines: [String] = []
        if let agent = report.agent {
            lines.append(
                "tetherd \(agent.release) (sync protocol \(agent.syncProtocol), control protocol \(agent.controlProtocol)), device \(agent.deviceName)"
                    + (agent.deviceID.map { " (\($0.prefix(8)))" } ?? ""))
        }
        if let connection = report.connection {
            var line = "server \(connection.serverURL): "
            if connection.connected {
                line += "connected since \(connection.connectedSince ?? "-")"
                if let software = connection.serverSoftware { line += ", \(software)" }
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
                notes.append("\(p.name): reset \(p.pendingReset ?? "-") waits for an operator: \(reason)")
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
            lines.append("\(r.id): \(kept) \(r.backupPath)")
            for hook in r.hooks { lines.append("  \(hook.event): \(hook.result) at \(hook.finishedAt)") }
            if let reason = r.fallbackReason { lines.append("  fell back: \(reason)") }
            if let cause = r.cause { lines.append("  cause: \(cause) (\(r.errorMessage))") }
            if let healed = r.healedChanges { lines.append("  healed: \(healed) changes given back to the restored server") }
        }
        return lines.joined(separator: "\n")
    }

    private static func render(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n")
    }
}
