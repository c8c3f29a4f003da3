import Foundation

/// The web console's pages as markup, from what the admin API answers (``ServerControl``).
enum ConsolePages {
    typealias H = ConsoleHTML

    static func signIn(error: String? = nil) -> HTML {
        H.page(
            title: "Sign in", current: nil, signedIn: false,
            body: """
                \(error.map { e -> HTML in "<p class=\"error\" role=\"alert\">\(e)</p>" } ?? "")
                <p>Sign in with the server's admin token (the file <code>admin_token_file</code> names).</p>
                <form method="post" action="/console/sign-in">
                \(H.input("token", label: "Admin token", type: "password"))
                <button type="submit">Sign in</button>
                </form>
                """)
    }

    static func partitions(_ status: AdminAPI.Status, devices: AdminAPI.Devices, csrf: String) -> HTML {
        let s = status.server
        let counts = Dictionary(grouping: devices.devices, by: \.partition).mapValues { Set($0.map { [$0.user, $0.deviceID] }).count }
        let rows = status.partitions.map { p -> [HTML] in
            let heal: String = p.heal.map { $0.isHealing ? "healing (lost \($0.restoredTo + 1)…\($0.lostUntil))" : "restored, \($0.mode.rawValue) closed" } ?? "-"
            return [
                "<a href=\"/console/partitions/\(H.segment(p.name))\">\(p.name)</a>", "\(p.serverVersion)", "\(p.historyEntries)",
                "\(p.rows)", "\(p.clientFiles)", "\(p.connectedClients)", "\(counts[p.name] ?? 0)", "\(heal)",
            ]
        }
        let sync = s.syncTerminated
            ? H.form(action: "/console/actions/enable-sync", csrf: csrf, button: "Enable sync…")
            : H.form(action: "/console/actions/terminate-sync", csrf: csrf, button: "Terminate sync…", danger: true)
        return H.page(
            title: "Partitions", current: "partitions", signedIn: true,
            body: """
                <dl>
                <dt>Server</dt><dd>tether-server \(s.release), sync protocol \(s.syncProtocol), schema version \(s.schemaVersion)</dd>
                <dt>Sync</dt><dd>\(s.syncTerminated ? HTML("<strong>terminated</strong>") : "enabled")</dd>
                <dt>Client recovery</dt><dd>\(s.clientRecovery ? "on" : "off")</dd>
                <dt>Connections</dt><dd>\(s.connections) connections, \(s.sessions) bound sessions</dd>
                </dl>
                \(status.partitions.isEmpty ? HTML("<p>No partitions yet: one appears when a device first binds it.</p>") :
                    H.table(caption: "Partitions", headers: ["Partition", "Version", "History", "Rows", "Client files", "Connected", "Devices", "Restore"], rows: rows))
                <h2>Sync</h2>
                \(sync)
                <h2>Access</h2>
                <form method="post" action="/console/actions/grant" class="inline">
                <input type="hidden" name="csrf" value="\(csrf)">
                \(H.input("user", label: "User", id: "grant-user"))\(H.input("pattern", label: "Partitions (name or glob)", id: "grant-pattern"))
                \(H.select("access", label: "Access", options: [("readwrite", "read and write"), ("read", "read only")], id: "grant-access"))
                <button type="submit">Grant…</button>
                </form>
                <form method="post" action="/console/actions/revoke" class="inline">
                <input type="hidden" name="csrf" value="\(csrf)">
                \(H.input("user", label: "User", id: "revoke-user"))\(H.input("pattern", label: "Pattern of the grant", id: "revoke-pattern"))
                <button type="submit" class="danger">Revoke…</button>
                </form>
                \(signOut(csrf))
                """)
    }

    static func partition(
        _ p: AdminAPI.Status.Partition, snapshots: [SnapshotRecord], devices: AdminAPI.Devices, csrf: String
    ) -> HTML {
        let heal: HTML = p.heal.map { h -> HTML in
            """
            <h2>Last restore</h2>
            <dl><dt>Versions lost</dt><dd>\(h.restoredTo + 1)…\(h.lostUntil)</dd><dt>Mode</dt><dd>\(h.mode.rawValue)</dd>
            <dt>Healed back to</dt><dd>\(h.healedTo)</dd><dt>Devices that gave back</dt><dd>\(h.devices)</dd>
            <dt>Rows healed</dt><dd>\(h.healedChanges)</dd><dt>State</dt><dd>\(h.isHealing ? "healing" : "closed")</dd></dl>
            """
        } ?? ""
        let snapshotRows = snapshots.map { s -> [HTML] in
            [
                "<code>\(s.id)</code>", "\(s.version)", "\(AdminAPI.Device.timestamp(s.createdAt))",
                """
                <form method="post" action="/console/actions/restore" class="inline">
                <input type="hidden" name="csrf" value="\(csrf)">
                <input type="hidden" name="partition" value="\(p.name)"><input type="hidden" name="snapshot" value="\(s.id)">
                \(H.select("mode", label: "Lost window", options: [("heal", "heal from devices"), ("rollback", "roll back")], id: "mode-\(s.id)"))
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
                \(H.form(action: "/console/actions/snapshot", csrf: csrf, fields: H.hidden("partition", p.name), button: "Take a snapshot…"))
                \(snapshots.isEmpty ? HTML("<p>No snapshot of this partition.</p>") :
                    H.table(caption: "Snapshots of \(p.name)", headers: ["Snapshot", "Version", "Taken", "Restore"], rows: snapshotRows))
                """)
    }

    /// The ledger, filtered and sorted as the query asked.
    static func devices(_ devices: AdminAPI.Devices, filter: DeviceFilter) -> HTML {
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
    static func device(_ entries: [AdminAPI.Device], id: String, identity: AdminAPI.Identity? = nil, csrf: String = "") -> HTML {
        let enrolled: HTML = identity.map { identitySection($0, csrf: csrf) } ?? ""
        guard let first = entries.first else {
            if let identity {
                return H.page(
                    title: "Device \(identity.name)", current: "devices", signedIn: true,
                    body: enrolled + "<h2>Partitions</h2><p>The device has not reported yet.</p>")
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
        return H.page(
            title: "Device \(first.deviceName)", current: "devices", signedIn: true,
            body: """
                <dl><dt>Id</dt><dd><code>\(first.deviceID)</code></dd><dt>Release</dt><dd>\(first.release)</dd>
                <dt>User</dt><dd>\(users.sorted().joined(separator: ", "))</dd><dt>Last report</dt><dd>\(first.reportedAt) (\(AgeText.words(seconds: first.reportedSecondsAgo)))\(first.stale ? HTML(" <span class=\"flag\">stale</span>") : "")</dd></dl>
                \(enrolled)
                \(H.table(
                    caption: "Partitions of \(first.deviceName)",
                    headers: (users.count > 1 ? ["User"] : []) + ["Partition", "State", "Version", "Client file", "Unsynced", "Waiting since", "Last upload", "Last error", "Resets", "Pending reset"],
                    rows: rows, rowClasses: entries.map(rowClass)))
                """)
    }

    static func deviceTable(_ list: AdminAPI.Devices, caption: String) -> HTML {
        guard !list.devices.isEmpty else { return "<p>No device has reported.</p>" }
        let rows = list.devices.map { d -> [HTML] in
            let flags = [d.stale ? "stale" : nil, d.wedged ? "wedged" : nil, d.pendingReset.map { "reset waits: \($0)" }].compactMap { $0 }
            return [
                "<a href=\"/console/devices/\(H.segment(d.deviceID))\">\(d.deviceName)</a>", "\(d.partition)", "\(d.state)",
                "\(d.unsyncedChanges)", "\(AgeText.words(seconds: d.reportedSecondsAgo))", "\(d.lastErrorCode.map { "\($0)" } ?? "-")", "\(resets(d.resets))",
                "\(d.release)", flags.isEmpty ? "-" : "<span class=\"flag\">\(flags.joined(separator: "; "))</span>",
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

    static func signOut(_ csrf: String) -> HTML {
        "<h2>Session</h2>" + H.form(action: "/console/sign-out", csrf: csrf, button: "Sign out")
    }

    /// A result or a refusal after an action, with the way back.
    static func outcome(title: String, message: String, error: Bool = false, back: String) -> HTML {
        H.page(
            title: title, current: nil, signedIn: true,
            body: "<p class=\"\(error ? "error" : "notice")\" role=\"status\">\(message)</p><p><a href=\"\(back)\">Back</a></p>")
    }
}

/// What the devices page was asked for (its GET form's fields).
struct DeviceFilter: Sendable, Decodable {
    var partition: String?
    var state: String?
    var stale: String?
    var sort: String

    init(partition: String? = nil, state: String? = nil, stale: String? = nil, sort: String = "seen") {
        self.partition = partition
        self.state = state
        self.stale = stale
        self.sort = sort
    }

    private enum CodingKeys: String, CodingKey { case partition, state, stale, sort }

    /// From the query (`URLEncodedFormDecoder`): an empty field is no filter.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func field(_ key: CodingKeys) throws -> String? { try c.decodeIfPresent(String.self, forKey: key).flatMap { $0.isEmpty ? nil : $0 } }
        self.init(partition: try field(.partition), state: try field(.state), stale: try field(.stale), sort: try field(.sort) ?? "seen")
    }

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
