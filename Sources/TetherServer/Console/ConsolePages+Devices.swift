import Foundation

/// The console's device lists (the devices page and a partition's devices): one page of the
/// whole ledger as the storage filters, sorts and pages it (``ServerControl/devicePage(_:legacy:)``),
/// unhealthy first by default, with the counts per health class and state over the filter at
/// the top (each a link that filters), sort headers and page links that keep the filter, ages
/// in words, and a refresh that needs no script.
extension ConsolePages {
    /// Where a list lives and what it may change: the devices page (`fixedPartition` nil), or
    /// a partition's page (its partition fixed).
    struct DeviceList {
        var base: String
        var query: ConsoleDeviceQuery
        var fixedPartition: String? = nil

        func link(_ change: (inout ConsoleDeviceQuery) -> Void) -> String {
            var changed = query.with(change)
            if fixedPartition != nil { changed.partition = nil }
            return base + changed.queryString
        }
    }

    /// The devices page: the filter form, then the list.
    static func devices(_ page: AdminAPI.DevicePage, query: ConsoleDeviceQuery, csrf: String = "") -> HTML {
        let list = DeviceList(base: "/console/devices", query: query)
        let states: [(String, String)] = [("", "any")] + DeviceLedgerFilter.stateNames.map { ($0, $0) }
        let sorts = DeviceLedgerSort.allCases.map { ($0.rawValue, sortLabel($0)) }
        return H.page(
            title: "Devices", current: "devices", signedIn: true, refresh: query.refresh,
            body: """
                <form method="get" action="/console/devices" class="inline" role="search">
                \(H.input("partition", label: "Partition (name or glob, store-*)", value: query.partition ?? "", required: false))
                \(H.select("state", label: "State", options: states, selected: query.state ?? ""))
                \(H.input("stale", label: "Not seen for (90s, 30m, 24h)", value: query.stale ?? "", required: false))
                \(H.input("text", label: "Name or id contains", value: query.text ?? "", required: false))
                \(H.select("sort", label: "Sort by", options: sorts, selected: query.sort.rawValue))
                <button type="submit">Show</button>
                </form>
                \(deviceList(page, list: list))
                \(selectionActions(query, total: page.total, csrf: csrf))
                <p>Stale: not heard from for <code>[devices] stale_after_seconds</code>. Wedged: unsynced changes waiting longer than <code>wedged_after_seconds</code> with no upload. Erroring: an error newer than its last upload.</p>
                """)
    }

    /// A list: its counts, refresh links, the table of one page, and the page links.
    static func deviceList(_ page: AdminAPI.DevicePage, list: DeviceList) -> HTML {
        let q = list.query
        let first = page.devices.isEmpty ? 0 : q.offset + 1
        let shown = "\(page.total) device partitions" + (page.devices.isEmpty ? "" : ", \(first)–\(q.offset + page.devices.count) shown")
        let order = "\(sortLabel(q.sort))\(q.descending ? ", reversed" : "")"
        var pages: [HTML] = []
        if q.offset > 0 {
            pages.append("<a href=\"\(list.link { $0.offset = max(0, q.offset - ConsoleDeviceQuery.pageSize) })\" rel=\"prev\">Previous page</a>")
        }
        if let next = page.nextOffset { pages.append("<a href=\"\(list.link { $0.offset = next })\" rel=\"next\">Next page</a>") }
        if let last = lastOffset(page.total), last > q.offset, page.nextOffset != nil {
            pages.append("<a href=\"\(list.link { $0.offset = last })\">Last page</a>")
        }
        return """
            \(counts(page, list: list))
            \(refreshLinks(list))
            \(page.devices.isEmpty ? HTML("<p>No device matches.</p>") : deviceTable(page.devices, caption: "\(shown), \(order)", list: list))
            \(pages.isEmpty ? "" : HTML("<nav aria-label=\"Pages\" class=\"pages\"><p>\(pages.joined(separator: " · "))</p></nav>"))
            """
    }

    /// The offset of the last page of `total` rows.
    static func lastOffset(_ total: Int) -> Int? {
        total > 0 ? (total - 1) / ConsoleDeviceQuery.pageSize * ConsoleDeviceQuery.pageSize : nil
    }

    /// The counts over the filter without its state: by health class, then by state, each a
    /// link filtering by it (the current one marked), and one clearing the state.
    static func counts(_ page: AdminAPI.DevicePage, list: DeviceList) -> HTML {
        let q = list.query
        func chip(_ label: String, _ count: Int, state: String?) -> HTML {
            let current = q.state == state
            return "<li><a href=\"\(list.link { $0.state = state; $0.offset = 0 })\"\(current ? HTML(" aria-current=\"true\"") : "")>\(label) <strong>\(count)</strong></a></li>"
        }
        let all = page.countsByState.values.reduce(0, +)
        let health = [("wedged", "wedged"), ("reset-pending", "reset-pending"), ("erroring", "erroring"), ("stale", "stale")].map { name, state in
            chip(name, page.countsByHealth[name] ?? 0, state: state)
        }
        let unhealthy = all - (page.countsByHealth["healthy"] ?? 0)
        let states = page.countsByState.sorted { $0.key < $1.key }.map { chip($0.key, $0.value, state: $0.key) }
        return """
            <section aria-label="Counts" class="counts">
            <ul class="chips" aria-label="By health">\(chip("all", all, state: nil))\(chip("unhealthy", unhealthy, state: "unhealthy"))\(health)</ul>
            <ul class="chips" aria-label="By state">\(states)</ul>
            </section>
            """
    }

    /// Links that make the page reload itself (a `<meta http-equiv="refresh">`: no script).
    static func refreshLinks(_ list: DeviceList) -> HTML {
        let choices = ConsoleDeviceQuery.refreshChoices.map { s -> HTML in
            list.query.refresh == s ? "<strong>every \(s) s</strong>" : "<a href=\"\(list.link { $0.refresh = s })\">every \(s) s</a>"
        }
        let off: HTML = list.query.refresh == nil ? "<strong>off</strong>" : "<a href=\"\(list.link { $0.refresh = nil })\">off</a>"
        return "<p class=\"refresh\">Refresh: \(choices.joined(separator: " · ")) · \(off)</p>"
    }

    static func sortLabel(_ sort: DeviceLedgerSort) -> String {
        switch sort {
        case .health: "health (wedged, reset-pending, erroring, stale, then the rest)"
        case .seen: "last seen, oldest first"
        case .name: "name"
        case .partition: "partition"
        case .state: "state"
        case .unsynced: "unsynced changes, fewest first"
        }
    }

    /// A table of device partitions; with `list`, its headers sort (a second click reverses).
    static func deviceTable(_ devices: [AdminAPI.Device], caption: String, list: DeviceList? = nil) -> HTML {
        guard !devices.isEmpty else { return "<p>No device has reported.</p>" }
        let rows = devices.map { d -> [HTML] in
            let flags = [d.stale ? "stale" : nil, d.wedged ? "wedged" : nil, d.pendingReset.map { "reset waits: \($0)" }].compactMap { $0 }
            return [
                "<a href=\"/console/devices/\(H.segment(d.deviceID))\">\(d.deviceName)</a>",
                "<a href=\"/console/partitions/\(H.segment(d.partition))\">\(d.partition)</a>", "\(d.state)",
                "\(d.unsyncedChanges)", "<span title=\"\(d.reportedAt)\">\(AgeText.words(seconds: d.reportedSecondsAgo))</span>",
                "\(d.lastErrorCode.map { "\($0)" } ?? "-")", "\(resets(d.resets))",
                "\(d.release)", flags.isEmpty ? "-" : "<span class=\"flag\">\(flags.joined(separator: "; "))</span>",
            ]
        }
        let columns: [(String, DeviceLedgerSort?)] = [
            ("Device", .name), ("Partition", .partition), ("State", .state), ("Unsynced", .unsynced), ("Seen", .seen), ("Last error", nil),
            ("Resets", nil), ("Release", nil), ("Flags", .health),
        ]
        let headers = columns.map { label, sort -> HTML in
            guard let list, let sort else { return "\(label)" }
            let current = list.query.sort == sort
            let href = list.link { $0.sort = sort; $0.descending = current && !list.query.descending; $0.offset = 0 }
            let mark: HTML = current ? (list.query.descending ? " ▼" : " ▲") : ""
            return "<a href=\"\(href)\"\(current ? HTML(" aria-current=\"true\"") : "")>\(label)</a>\(mark)"
        }
        return H.table(caption: caption, headers: headers, rows: rows, rowClasses: devices.map(rowClass))
    }
}
