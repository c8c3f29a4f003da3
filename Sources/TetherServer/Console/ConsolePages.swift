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

    /// The partitions; `counts`: the ledger's entries of each.
    static func partitions(_ status: AdminAPI.Status, counts: [String: Int], csrf: String) -> HTML {
        let s = status.server
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
        _ p: AdminAPI.Status.Partition, snapshots: [SnapshotRecord], devices: AdminAPI.DevicePage, query: ConsoleDeviceQuery, csrf: String
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
            title: "Partition \(p.name)", current: "partitions", signedIn: true, refresh: query.refresh,
            body: """
                <dl>
                <dt>Server version</dt><dd>\(p.serverVersion)</dd><dt>Compacted through</dt><dd>\(p.compactedThrough)</dd>
                <dt>History</dt><dd>\(p.historyEntries) entries, \(p.historyBytes) bytes</dd><dt>Rows</dt><dd>\(p.rows)</dd>
                <dt>Client files</dt><dd>\(p.clientFiles)</dd><dt>Connected now</dt><dd>\(p.connectedClients)</dd>
                </dl>
                \(heal)
                <h2>Devices</h2>
                \(deviceList(devices, list: DeviceList(base: "/console/partitions/\(H.segment(p.name))", query: query, fixedPartition: p.name)))
                <h2>Snapshots</h2>
                \(H.form(action: "/console/actions/snapshot", csrf: csrf, fields: H.hidden("partition", p.name), button: "Take a snapshot…"))
                \(snapshots.isEmpty ? HTML("<p>No snapshot of this partition.</p>") :
                    H.table(caption: "Snapshots of \(p.name)", headers: ["Snapshot", "Version", "Taken", "Restore"], rows: snapshotRows))
                """)
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
