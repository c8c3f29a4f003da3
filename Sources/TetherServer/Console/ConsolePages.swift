import Foundation

/// The web console's pages as markup, from what the admin API answers (``ServerControl``).
enum ConsolePages {
    typealias H = ConsoleHTML

    static func signIn(error: String? = nil) -> String {
        H.page(
            title: "Sign in", current: nil, signedIn: false,
            body: """
                \(error.map { "<p class=\"error\" role=\"alert\">\(H.escape($0))</p>" } ?? "")
                <p>Sign in with the server's admin token (the file <code>admin_token_file</code> names).</p>
                <form method="post" action="/console/sign-in">
                \(H.input("token", label: "Admin token", type: "password"))
                <button type="submit">Sign in</button>
                </form>
                """)
    }

    static func partitions(_ status: AdminAPI.Status, devices: AdminAPI.Devices, csrf: String) -> String {
        let s = status.server
        let counts = Dictionary(grouping: devices.devices, by: \.partition).mapValues { Set($0.map { [$0.user, $0.deviceID] }).count }
        let rows = status.partitions.map { p -> [String] in
            let heal = p.heal.map { $0.isHealing ? "healing (lost \($0.restoredTo + 1)…\($0.lostUntil))" : "restored, \($0.mode.rawValue) closed" } ?? "-"
            return [
                "<a href=\"/console/partitions/\(H.segment(p.name))\">\(H.escape(p.name))</a>", "\(p.serverVersion)", "\(p.historyEntries)",
                "\(p.rows)", "\(p.clientFiles)", "\(p.connectedClients)", "\(counts[p.name] ?? 0)", H.escape(heal),
            ]
        }
        let sync = s.syncTerminated
            ? H.form(action: "/console/actions/enable-sync", csrf: csrf, button: "Enable sync…")
            : H.form(action: "/console/actions/terminate-sync", csrf: csrf, button: "Terminate sync…", danger: true)
        return H.page(
            title: "Partitions", current: "partitions", signedIn: true,
            body: """
                <dl>
                <dt>Server</dt><dd>tether-server \(H.escape(s.release)), sync protocol \(s.syncProtocol), schema version \(s.schemaVersion)</dd>
                <dt>Sync</dt><dd>\(s.syncTerminated ? "<strong>terminated</strong>" : "enabled")</dd>
                <dt>Client recovery</dt><dd>\(s.clientRecovery ? "on" : "off")</dd>
                <dt>Connections</dt><dd>\(s.connections) connections, \(s.sessions) bound sessions</dd>
                </dl>
                \(status.partitions.isEmpty ? "<p>No partitions yet: one appears when a device first binds it.</p>" :
                    H.table(caption: "Partitions", headers: ["Partition", "Version", "History", "Rows", "Client files", "Connected", "Devices", "Restore"], rows: rows))
                <h2>Sync</h2>
                \(sync)
                <h2>Access</h2>
                <form method="post" action="/console/actions/grant" class="inline">
                <input type="hidden" name="csrf" value="\(H.escape(csrf))">
                \(H.input("user", label: "User", id: "grant-user"))\(H.input("pattern", label: "Partitions (name or glob)", id: "grant-pattern"))
                \(H.select("access", label: "Access", options: [("readwrite", "read and write"), ("read", "read only")], id: "grant-access"))
                <button type="submit">Grant…</button>
                </form>
                <form method="post" action="/console/actions/revoke" class="inline">
                <input type="hidden" name="csrf" value="\(H.escape(csrf))">
                \(H.input("user", label: "User", id: "revoke-user"))\(H.input("pattern", label: "Pattern of the grant", id: "revoke-pattern"))
                <button type="submit" class="danger">Revoke…</button>
                </form>
                \(signOut(csrf))
                """)
    }

    static func partition(
        _ p: AdminAPI.Status.Partition, snapshots: [SnapshotRecord], devices: AdminAPI.Devices, csrf: String
    ) -> String {
        let heal = p.heal.map { h in
            """
            <h2>Last restore</h2>
            <dl><dt>Versions lost</dt><dd>\(h.restoredTo + 1)…\(h.lostUntil)</dd><dt>Mode</dt><dd>\(h.mode.rawValue)</dd>
            <dt>Healed back to</dt><dd>\(h.healedTo)</dd><dt>Devices that gave back</dt><dd>\(h.devices)</dd>
            <dt>Rows healed</dt><dd>\(h.healedChanges)</dd><dt>State</dt><dd>\(h.isHealing ? "healing" : "closed")</dd></dl>
            """
        } ?? ""
        let snapshotRows = snapshots.map { s -> [String] in
            [
                "<code>\(H.escape(s.id))</code>", "\(s.version)", H.escape(AdminAPI.Device.timestamp(s.createdAt)),
                """
                <form method="post" action="/console/actions/restore" class="inline">
                <input type="hidden" name="csrf" value="\(H.escape(csrf))">
                <input type="hidden" name="partition" value="\(H.escape(p.name))"><input type="hidden" name="snapshot" value="\(H.escape(s.id))">
                \(H.select("mode", label: "Lost window", options: [("heal", "heal from devices"), ("rollback", "roll back")], id: "mode-\(H.escape(s.id))"))
                <button type="submit" class="danger">Restore…</button></form>
                """,
            ]
        }
        return H.page(
            title: "Partition \(p.name)", current: "partitions", signedIn: true,
            body: """
                <dl>
                <dt>Server version</dt><dd>\(p.serverVersion)</dd><dt>Compacted through</dt><dd>\(p.compactedThrough)</dd>
                <dt>History</dt><dd>\(p.historyEntries) entries, \(p.historyBytes) bytes</dd><dt>Rows</dt><dd>\(p.rows)</dd>
                <dt>Client files</dt><dd>\(p.clientFiles)</dd><dt>Connected now</dt><dd>\(p.connectedClients)</dd>
                </dl>
                \(heal)
                <h2>Devices</h2>
                \(deviceTable(devices, caption: "Devices of \(p.name)"))
                <h2>Snapshots</h2>
                \(H.form(action: "/console/actions/snapshot", csrf: csrf, fields: "<input type=\"hidden\" name=\"partition\" value=\"\(H.escape(p.name))\">", button: "Take a snapshot…"))
                \(snapshots.isEmpty ? "<p>No snapshot of this partition.</p>" :
                    H.table(caption: "Snapshots of \(p.name)", headers: ["Snapshot", "Version", "Taken", "Restore"], rows: snapshotRows))
                """)
    }

    /// The ledger, filtered and sorted as the query asked.
    static func devices(_ devices: AdminAPI.Devices, filter: DeviceFilter) -> String {
        let sortOptions: [(String, String)] = [("seen", "last seen, oldest first"), ("name", "name"), ("unsynced", "unsynced changes, most first"), ("state", "state")]
        let states: [(String, String)] = [("", "any")] + ServerMetrics.deviceStates.map { ($0, $0) }
        return H.page(
            title: "Devices", current: "devices", signedIn: true,
            body: """
                <form method="get" action="/console/devices" class="inline" role="search">
                \(H.input("partition", label: "Partition", value: filter.partition ?? "", required: false))
                \(H.select("state", label: "State", options: states, selected: filter.state ?? ""))
                \(H.input("stale", label: "Not seen for (90s, 30m, 24h)", value: filter.stale ?? "", required: false))
                \(H.select("sort", label: "Sort by", options: sortOptions, selected: filter.sort))
                <button type="submit">Show</button>
                </form>
                \(deviceTable(filter.sorted(devices), caption: "\(devices.devices.count) device partitions\(devices.truncated ? " (the first 10,000)" : "")"))
                <p>Stale: not heard from for <code>[devices] stale_after_seconds</code>. Wedged: unsynced changes waiting longer than <code>wedged_after_seconds</code> with no upload.</p>
                """)
    }

    /// A device's ledger entries and, when it enrolled, its identity with its actions.
    static func device(_ entries: [AdminAPI.Device], id: String, identity: AdminAPI.Identity? = nil, csrf: String = "") -> String {
        let enrolled = identity.map { identitySection($0, csrf: csrf) } ?? ""
        guard let first = entries.first else {
            if let identity {
                return H.page(
                    title: "Device \(identity.name)", current: "devices", signedIn: true,
                    body: enrolled + "<h2>Partitions</h2><p>The device has not reported yet.</p>")
            }
            return H.page(title: "Device", current: "devices", signedIn: true, body: "<p class=\"error\">No device has the id <code>\(H.escape(id))</code>.</p>")
        }
        // The ledger's key is (user, device id, partition): another user's device reporting the
        // same id is another device, shown with its user.
        let users = Set(entries.map(\.user))
        let rows = entries.map { d -> [String] in
            (users.count > 1 ? [H.escape(d.user)] : []) + [
                "<a href=\"/console/partitions/\(H.segment(d.partition))\">\(H.escape(d.partition))</a>", H.escape(d.state), "\(d.serverVersion)",
                "\(d.clientFile)", "\(d.unsyncedChanges)", H.escape(d.unsyncedSince ?? "-"), H.escape(d.lastUploadAt ?? "-"),
                d.lastErrorCode.map { "\($0) at \(H.escape(d.lastErrorAt ?? "-"))" } ?? "-", H.escape(resets(d.resets)), H.escape(d.pendingReset ?? "-"),
            ]
        }
        return H.page(
            title: "Device \(first.deviceName)", current: "devices", signedIn: true,
            body: """
                <dl><dt>Id</dt><dd><code>\(H.escape(first.deviceID))</code></dd><dt>Release</dt><dd>\(H.escape(first.release))</dd>
                <dt>User</dt><dd>\(H.escape(users.sorted().joined(separator: ", ")))</dd><dt>Last report</dt><dd>\(H.escape(first.reportedAt)) (\(first.reportedSecondsAgo) s ago)\(first.stale ? " <span class=\"flag\">stale</span>" : "")</dd></dl>
                \(enrolled)
                \(H.table(
                    caption: "Partitions of \(first.deviceName)",
                    headers: (users.count > 1 ? ["User"] : []) + ["Partition", "State", "Version", "Client file", "Unsynced", "Waiting since", "Last upload", "Last error", "Resets", "Pending reset"],
                    rows: rows, rowClasses: entries.map(rowClass)))
                """)
    }

    static func deviceTable(_ list: AdminAPI.Devices, caption: String) -> String {
        guard !list.devices.isEmpty else { return "<p>No device has reported.</p>" }
        let rows = list.devices.map { d -> [String] in
            let flags = [d.stale ? "stale" : nil, d.wedged ? "wedged" : nil, d.pendingReset.map { "reset waits: \($0)" }].compactMap { $0 }
            return [
                "<a href=\"/console/devices/\(H.segment(d.deviceID))\">\(H.escape(d.deviceName))</a>", H.escape(d.partition), H.escape(d.state),
                "\(d.unsyncedChanges)", "\(d.reportedSecondsAgo) s ago", d.lastErrorCode.map { "\($0)" } ?? "-", H.escape(resets(d.resets)),
                H.escape(d.release), flags.isEmpty ? "-" : "<span class=\"flag\">\(H.escape(flags.joined(separator: "; ")))</span>",
            ]
        }
        return H.table(
            caption: caption, headers: ["Device", "Partition", "State", "Unsynced", "Seen", "Last error", "Resets", "Release", "Flags"],
            rows: rows, rowClasses: list.devices.map(rowClass))
    }

    static func rowClass(_ d: AdminAPI.Device) -> String? {
        d.wedged ? "wedged" : d.pendingReset != nil ? "pending" : d.stale ? "stale" : nil
    }

    static func resets(_ counts: [String: Int64]) -> String {
        counts.isEmpty ? "-" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    static func signOut(_ csrf: String) -> String {
        "<h2>Session</h2>" + H.form(action: "/console/sign-out", csrf: csrf, button: "Sign out")
    }

    /// A result or a refusal after an action, with the way back.
    static func outcome(title: String, message: String, error: Bool = false, back: String) -> String {
        H.page(
            title: title, current: nil, signedIn: true,
            body: "<p class=\"\(error ? "error" : "notice")\" role=\"status\">\(H.escape(message))</p><p><a href=\"\(back)\">Back</a></p>")
    }
}

/// What the devices page was asked for (its GET form's fields).
struct DeviceFilter: Sendable {
    var partition: String?
    var state: String?
    var stale: String?
    var sort: String

    func sorted(_ list: AdminAPI.Devices) -> AdminAPI.Devices {
        var list = list
        list.devices.sort { a, b in
            switch sort {
            case "name": (a.deviceName, a.partition) < (b.deviceName, b.partition)
            case "unsynced": (a.unsyncedChanges, b.deviceName) > (b.unsyncedChanges, a.deviceName)
            case "state": (a.state, a.deviceName) < (b.state, b.deviceName)
            default: (a.reportedSecondsAgo, b.deviceName) > (b.reportedSecondsAgo, a.deviceName)
            }
        }
        return list
    }
}
