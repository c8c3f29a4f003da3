import Foundation
import TetherControl

/// Human-readable tables for `tetherctl status` and `tetherctl resets`.
enum StatusFormatter {
    /// The connection line, then the partitions' table.
    static func status(_ result: JSONValue) -> String {
        guard let connection = result["connection"], connection != .null else { return table(result) }
        var line = "server \(text(connection["server_url"])): "
        if connection["connected"] == true {
            line += "connected since \(text(connection["connected_since"]))"
        } else {
            line += "not connected"
        }
        return line + "\n" + table(result)
    }

    static func table(_ result: JSONValue) -> String {
        let partitions = result["partitions"]?.arrayValue ?? []
        guard !partitions.isEmpty else { return "no partitions configured" }
        var rows = [["PARTITION", "STATE", "SERVER VERSION", "UNSYNCED", "PENDING RESET", "LAST ERROR"]]
        var notes: [String] = []
        for p in partitions {
            if let reason = p["pending_reset_reason"]?.stringValue {
                notes.append("\(text(p["name"])): reset \(text(p["pending_reset"])) waits for an operator: \(reason)")
            }
            var state = text(p["state"])
            if let download = p["download"], download != .null {
                state += " (\(int(download["rows_done"]))/\(int(download["rows_total"])) rows"
                if let rate = download["rows_per_second"]?.numberValue, rate > 0 { state += ", \(Int(rate)) rows/s" }
                state += ")"
            }
            var error = "-"
            if let e = p["last_error"], e != .null {
                error = "\(int(e["code"])) \(text(e["message"])) (\(text(e["at"])))"
            }
            rows.append([text(p["name"]), state, int(p["server_version"]), int(p["unsynced_changes"]), text(p["pending_reset"]), error])
        }
        return ([render(rows)] + notes).joined(separator: "\n")
    }

    static func resets(_ result: JSONValue) -> String {
        let resets = result["resets"]?.arrayValue ?? []
        guard !resets.isEmpty else { return "no client resets" }
        var lines: [String] = []
        var rows = [["ID", "PARTITION", "ERROR", "MODE", "OUTCOME", "PHASE", "STARTED", "FINISHED"]]
        for r in resets {
            rows.append([
                text(r["id"]), text(r["partition"]), int(r["error_code"]), text(r["mode"]), text(r["outcome"]),
                text(r["phase"]), text(r["started_at"]), text(r["finished_at"]),
            ])
        }
        lines.append(render(rows))
        for r in resets {
            let kept = r["quarantined"] == true ? "damaged store quarantined at" : "backup"
            lines.append("\(text(r["id"])): \(kept) \(text(r["backup_path"]))")
            for hook in r["hooks"]?.arrayValue ?? [] {
                lines.append("  \(text(hook["event"])): \(text(hook["result"])) at \(text(hook["finished_at"]))")
            }
            if let reason = r["fallback_reason"]?.stringValue { lines.append("  fell back: \(reason)") }
            if let cause = r["cause"]?.stringValue { lines.append("  cause: \(cause) (\(text(r["error_message"])))") }
        }
        return lines.joined(separator: "\n")
    }

    private static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let s)?: s
        case .number(let n)?: n == n.rounded() ? String(Int(n)) : String(n)
        case .bool(let b)?: String(b)
        default: "-"
        }
    }

    private static func int(_ value: JSONValue?) -> String { text(value) }

    private static func render(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n")
    }
}
