import Foundation
import TetherProtocol

/// The console's remote actions: the buttons on a device's page and under a filtered list
/// (each behind ``ConsoleActions``' confirmation, which shows the device count), a device's
/// actions with their outcomes (refused and expired ones marked), and a diagnostics report,
/// shown as the escaped text it is.
extension ConsolePages {
    static func remoteKindOptions() -> [(value: String, label: String)] {
        RemoteActionKind.all.map { ($0.rawValue, ConsoleActions.remoteLabel($0)) }
    }

    /// A device's actions: the form asking for one, what it accepts, and its actions newest first.
    static func remoteActions(_ actions: AdminAPI.DeviceActions, deviceID: String, partitions: [String], csrf: String) -> HTML {
        let partitionOptions = [("", "none (retry now, diagnostics)")] + partitions.map { ($0, $0) }
        let accepts: HTML = actions.accepts.map { list -> HTML in
            "<p>The device accepts: \(list.isEmpty ? "nothing" : list.joined(separator: ", ")) (its <code>[device] remote_actions</code>).</p>"
        } ?? "<p>The device has not said which actions it accepts (an older agent runs none).</p>"
        let rows = actions.actions.map { a -> [HTML] in
            let outcome: HTML = ["refused", "expired", "failed"].contains(a.state)
                ? "<span class=\"flag\">\(a.state)</span>" : "\(a.state)"
            let report: HTML = a.hasDiagnostics ? "<a href=\"/console/remote-actions/\(a.id)\">report</a>" : "-"
            return [
                "\(a.id)", "\(a.action)", "\(a.partition ?? "-")", "\(a.requestedBy)", "\(a.requestedAt)", outcome, "\(a.finishedAt ?? "-")",
                "\(a.message ?? "-")", report,
            ]
        }
        let rowClasses = actions.actions.map { ["refused", "expired", "failed"].contains($0.state) ? "pending" : nil }
        return """
            <h2>Remote actions</h2>
            \(accepts)
            <form method="post" action="/console/actions/\(ConsoleActions.remoteAction)" class="inline">
            <input type="hidden" name="csrf" value="\(csrf)">\(H.hidden("device", deviceID))\(H.hidden("device-id", deviceID))
            \(H.select("kind", label: "Action", options: remoteKindOptions(), id: "remote-kind"))
            \(H.select("partition", label: "Partition", options: partitionOptions, id: "remote-partition"))
            <button type="submit">Ask the device…</button>
            </form>
            \(actions.actions.isEmpty ? HTML("<p>No remote action asked of this device.</p>") : H.table(
                caption: "Remote actions, newest first",
                headers: ["Id", "Action", "Partition", "Asked by", "Asked at", "Outcome", "Finished", "Message", "Diagnostics"],
                rows: rows, rowClasses: rowClasses))
            """
    }

    /// Under a device list: ask every device the list's filter selects (not only this page).
    static func selectionActions(_ query: ConsoleDeviceQuery, total: Int, csrf: String) -> HTML {
        guard total > 0 else { return "" }
        let fields = [
            ("select-partition", query.partition), ("state", query.state), ("stale", query.stale), ("text", query.text),
        ].compactMap { name, value in value.map { H.hidden(name, $0) } }
        return """
            <h2>Remote action on this list</h2>
            <p>Asks every device the filter above selects (\(total) device partitions, every page), each for its own partition unless one is named.</p>
            <form method="post" action="/console/actions/\(ConsoleActions.remoteAction)" class="inline">
            <input type="hidden" name="csrf" value="\(csrf)">\(fields)
            \(H.select("kind", label: "Action", options: remoteKindOptions(), id: "selection-kind"))
            <button type="submit" class="danger">Ask these devices…</button>
            </form>
            """
    }

    /// One action's diagnostics report: the device's JSON, escaped, in a `<pre>`.
    static func diagnostics(_ action: AdminAPI.DeviceAction) -> HTML {
        H.page(
            title: "Diagnostics of \(action.deviceName)", current: "devices", signedIn: true,
            body: """
                <dl><dt>Action</dt><dd>\(action.id), \(action.action), \(action.state)</dd><dt>Asked</dt><dd>\(action.requestedAt) by \(action.requestedBy)</dd>
                <dt>Finished</dt><dd>\(action.finishedAt ?? "-")</dd></dl>
                \(action.diagnostics.map { report -> HTML in "<pre id=\"diagnostics\"><code>\(report)</code></pre>" } ?? "<p>No report came back.</p>")
                <p><a href="/console/devices/\(H.segment(action.deviceID))">Back to the device</a></p>
                """)
    }
}
