import Foundation

/// A device's page: its ledger entries (read by its id alone), its enrollment, and its report
/// history as small charts (unsynced changes; time since its last upload) with the samples as
/// a table.
extension ConsolePages {
    /// A device's ledger entries and, when it enrolled, its identity with its actions; its
    /// history when there is one.
    static func device(
        _ entries: [AdminAPI.Device], id: String, identity: AdminAPI.Identity? = nil, history: AdminAPI.DeviceHistory? = nil, csrf: String = "",
        refresh: Int? = nil, extra: HTML = "", moreEntries: Bool = false
    ) -> HTML {
        let enrolled: HTML = identity.map { identitySection($0, csrf: csrf) } ?? ""
        guard let first = entries.first else {
            if let identity {
                return H.page(
                    title: "Device \(identity.name)", current: "devices", signedIn: true,
                    body: enrolled + extra + "<h2>Partitions</h2><p>The device has not reported yet.</p>")
            }
            return H.page(title: "Device", current: "devices", signedIn: true, body: "<p class=\"error\">No device has the id <code>\(id)</code>.</p>")
        }
        // The ledger's key is (user, device id, partition): another user's device reporting the
        // same id is another device, shown with its user.
        let users = Set(entries.map(\.user))
        let rows = entries.map { d -> [HTML] in
            (users.count > 1 ? ["\(d.user)"] : []) + [
                "<a href=\"/console/partitions/\(H.segment(d.partition))\">\(d.partition)</a>", "\(d.state)", "\(d.serverVersion)",
                "\(d.clientFile)", "\(d.unsyncedChanges)", "\(d.unsyncedSince ?? "-")", "\(d.lastUploadAt ?? "-")",
                "\(d.lastErrorCode.map { "\($0) at \(d.lastErrorAt ?? "-")" } ?? "-")", "\(resets(d.resets))", "\(d.pendingReset ?? "-")",
            ]
        }
        let refreshLink: HTML = refresh == nil
            ? "<a href=\"/console/devices/\(H.segment(id))?refresh=30\">every 30 s</a>"
            : "<a href=\"/console/devices/\(H.segment(id))\">off</a>"
        return H.page(
            title: "Device \(first.deviceName)", current: "devices", signedIn: true, refresh: refresh,
            body: """
                <dl><dt>Id</dt><dd><code>\(first.deviceID)</code></dd><dt>Release</dt><dd>\(first.release)</dd>
                <dt>User</dt><dd>\(users.sorted().joined(separator: ", "))</dd><dt>Last report</dt><dd>\(first.reportedAt) (\(AgeText.words(seconds: first.reportedSecondsAgo)))\(first.stale ? HTML(" <span class=\"flag\">stale</span>") : "")</dd></dl>
                <p class="refresh">Refresh: \(refreshLink)</p>
                \(enrolled)
                \(H.table(
                    caption: "Partitions of \(first.deviceName)",
                    headers: (users.count > 1 ? ["User"] : []) + ["Partition", "State", "Version", "Client file", "Unsynced", "Waiting since", "Last upload", "Last error", "Resets", "Pending reset"],
                    rows: rows, rowClasses: entries.map(rowClass)))
                \(moreEntries ? truncationNote(id: first.deviceID, shown: entries.count) : "")
                \(extra)
                \(history.map { historySection($0, multipleUsers: users.count > 1) } ?? "")
                """)
    }

    /// Said under a device's partitions when it has more ledger entries than one page shows.
    static func truncationNote(id: String, shown: Int) -> HTML {
        "<p class=\"flag\">Only the first \(shown) entries of this device (by partition) are shown: it has more. <code>GET /admin/devices?device_id=\(id)&amp;sort=partition&amp;offset=\(shown)</code> pages through the rest.</p>"
    }

    /// The report history, per user and partition: two charts and the samples as a table.
    static func historySection(_ history: AdminAPI.DeviceHistory, multipleUsers: Bool) -> HTML {
        let groups = Dictionary(grouping: history.samples) { [$0.user, $0.partition] }.sorted { ($0.key[0], $0.key[1]) < ($1.key[0], $1.key[1]) }
        guard !groups.isEmpty else { return "<h2>History</h2><p>No report in the last \(AgeText.span(seconds: history.retentionSeconds)).</p>" }
        let end = seconds(history.at) ?? Int64(Date().timeIntervalSince1970)
        let start = end - history.retentionSeconds
        let sections = groups.enumerated().map { index, group -> HTML in
            let (user, partition) = (group.key[0], group.key[1])
            let samples = group.value.sorted { $0.bucketStart < $1.bucketStart }
            let times = samples.map { seconds($0.bucketStart) ?? 0 }
            let name = multipleUsers ? "\(partition) (\(user))" : partition
            let unsynced = ConsoleChart(
                id: "chart-unsynced-\(index)", title: "Unsynced changes of \(name)",
                points: zip(times, samples).map { .init(time: $0, value: $1.maxUnsyncedChanges) }, start: start, end: end,
                gap: history.bucketSeconds, label: { "\($0)" })
            let since = ConsoleChart(
                id: "chart-upload-\(index)", title: "Time since the last upload of \(name)",
                points: zip(times, samples).compactMap { t, s in s.secondsSinceUpload.map { .init(time: t, value: $0) } }, start: start, end: end,
                gap: history.bucketSeconds, label: { AgeText.span(seconds: $0) })
            let rows = samples.reversed().map { s -> [HTML] in
                ["\(s.bucketStart.replacingOccurrences(of: "T", with: " "))", "\(s.maxUnsyncedChanges)", "\(s.secondsSinceUpload.map { AgeText.span(seconds: $0) } ?? "none")", "\(s.state)"]
            }
            return """
                <h3>\(name)</h3>
                <figure><figcaption>Unsynced changes (most in each \(AgeText.span(seconds: history.bucketSeconds)))</figcaption>\(unsynced.svg)</figure>
                <figure><figcaption>Time since the last upload</figcaption>\(since.svg)</figure>
                <details><summary>The samples of \(name) as a table</summary>
                \(H.table(caption: "Report history of \(name), newest first", headers: ["From", "Unsynced", "Since upload", "State"], rows: rows))
                </details>
                """
        }
        return """
            <h2>History</h2>
            <p>One sample per \(AgeText.span(seconds: history.bucketSeconds)) the device reported in, the last \(AgeText.span(seconds: history.retentionSeconds)).</p>
            \(sections)
            """
    }

    /// Seconds since 1970 of an API timestamp (RFC 3339).
    static func seconds(_ timestamp: String) -> Int64? {
        // A timestamp the server wrote always parses; one that does not has no place on a chart.
        (try? Date(timestamp, strategy: .iso8601)).map { Int64($0.timeIntervalSince1970) }
    }
}
