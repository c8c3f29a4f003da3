import ArgumentParser
import Foundation
import TetherProtocol
import TetherServer

/// `tether-server admin devices`: the device ledger (docs/server.md, "Device ledger").
struct AdminDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Identities (enrolled devices and [[user]]s) and what each device last reported of its partitions.",
        discussion: """
            Without a filter the identities come first: source config or enrolled, active or \
            revoked, tags, the enrollment key, when it enrolled, its credential's age and when it \
            was last seen. Then the ledger: one line per device and partition.
            """)
    @ParentCommand var admin: AdminCommand

    @Option(name: .long, help: "Only this partition, or the partitions a glob matches (store-*: * any run, ? one character).")
    var partition: String?

    @Option(name: .long, help: "Only devices not heard from for this long (90s, 30m, 24h, 7d).")
    var stale: String?

    @Option(
        name: .long,
        help: "Only this state (synced, syncing, offline, paused, reset-pending, resetting, stopped, connecting, other) or health (unhealthy, wedged, erroring, stale).",
        completion: .list(AdminDevices.states))
    var state: String?

    @Option(name: .long, help: "Page in this order: health (the default: wedged, reset-pending, erroring, stale, then the rest), seen, name, partition, state, unsynced.")
    var sort: String?

    @Flag(name: .long, help: "Page in the reverse order.")
    var desc = false

    @Option(name: .long, help: "Entries per page, 1 to 500 (default 100).")
    var limit: Int?

    @Option(name: .long, help: "This page (1-based) of --limit entries.")
    var page: Int?

    @Option(name: .long, help: "The page after this cursor (the `next` a page printed).")
    var after: String?

    /// Whether a page was asked for: any of --sort, --desc, --limit, --page, --after.
    var paged: Bool { sort != nil || desc || limit != nil || page != nil || after != nil }

    func validate() throws {
        if let stale, DurationText.seconds(stale) == nil {
            throw ValidationError("--stale: \(stale.debugDescription) is not a duration such as 90s, 30m, 24h or 7d")
        }
        if let state, !Self.states.contains(state) {
            throw ValidationError("--state: \(state.debugDescription) is not one of \(Self.states.joined(separator: " "))")
        }
        if let sort, DeviceLedgerSort(rawValue: sort) == nil {
            throw ValidationError("--sort: \(sort.debugDescription) is not one of \(DeviceLedgerSort.allCases.map(\.rawValue).joined(separator: " "))")
        }
        if let limit, !(1...DeviceLedgerPageQuery.maxLimit).contains(limit) {
            throw ValidationError("--limit: \(limit) is not from 1 to \(DeviceLedgerPageQuery.maxLimit)")
        }
        if let page, page < 1 { throw ValidationError("--page: pages count from 1") }
        if page != nil, after != nil { throw ValidationError("--page and --after: give one") }
    }

    func run() async throws {
        let staleSeconds = stale.flatMap(DurationText.seconds)
        if paged { return try await runPaged(staleSeconds: staleSeconds) }
        let filtered = partition != nil || state != nil || stale != nil
        try await admin.perform({ (client: AdminClient) async throws -> AdminAPI.Devices in
            var list = try await client.devices(partition: partition, state: state, staleSeconds: staleSeconds)
            if !filtered { list.identities = try await Self.identities(client) }
            return list
        }) { list in
            (list.identities.map { Self.identityTable($0) + "\n\n" } ?? "") + Self.table(list)
        }
    }

    /// Every identity; nil from a server that keeps none (an older release: 404, or a storage
    /// without them: 503), so the ledger still shows.
    static func identities(_ client: AdminClient) async throws -> [AdminAPI.Identity]? {
        do {
            return try await client.allIdentities()
        } catch AdminClient.Failure.rejected(let status, _, _, _) where status == 404 || status == 503 {
            return nil
        }
    }

    /// One line per identity: where it comes from, whether it may sync, its enrollment and credential.
    static func identityTable(_ identities: [AdminAPI.Identity]) -> String {
        guard !identities.isEmpty else { return "no identities: no [[user]] and no enrolled device" }
        let rows = identities.map { i -> [String] in
            [
                i.name, i.source, i.state + (i.rotationPending ? ", rotating" : ""), TagEdit.describe(i.tags), i.enrolledWithKey ?? "-",
                i.createdAt ?? "-", i.credentialAgeSeconds.map { age(Double($0)) } ?? "-",
                i.lastSeenSecondsAgo.map { age(Double($0)) + " ago" } ?? "-",
            ]
        }
        return AdminTable.render(["IDENTITY", "SOURCE", "STATE", "TAGS", "KEY", "CREATED", "CREDENTIAL_AGE", "LAST_SEEN"], rows)
    }

    /// The states an entry may have (the agent's and `other`, a state the server does not
    /// know), and the health classes.
    static let states = DeviceLedgerFilter.stateNames


    /// One line per device and partition; stale and wedged ones marked.
    static func table(_ list: AdminAPI.Devices) -> String {
        guard !list.devices.isEmpty else { return "no devices have reported yet" }
        var lines = [row(["DEVICE", "ID", "PARTITION", "STATE", "UNSYNCED", "WAITING", "SEEN", "LAST_ERROR", "RESETS", "RELEASE", "FLAGS"])]
        let now = Date()
        for d in list.devices {
            // A time that does not parse shows as unknown: "-", or the error without its age.
            let waiting = d.unsyncedSince.flatMap { try? Date($0, strategy: .iso8601) }.map { age(now.timeIntervalSince($0)) } ?? "-"
            let error = d.lastErrorCode.map { code in
                "\(code)" + (d.lastErrorAt.flatMap { try? Date($0, strategy: .iso8601) }.map { " " + age(now.timeIntervalSince($0)) + " ago" } ?? "")
            } ?? "-"
            let resets = d.resets.isEmpty ? "-" : d.resets.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            let flags = [d.stale ? "stale" : nil, d.wedged ? "wedged" : nil, d.pendingReset.map { "pending: \($0)" }].compactMap { $0 }
            lines.append(row([
                d.deviceName, String(d.deviceID.prefix(8)), d.partition, d.state, "\(d.unsyncedChanges)", waiting,
                age(Double(d.reportedSecondsAgo)) + " ago", error, resets, d.release, flags.isEmpty ? "-" : flags.joined(separator: "; "),
            ]))
        }
        if list.truncated { lines.append("(the first \(list.devices.count) only: narrow with --partition, --state or --stale)") }
        return lines.joined(separator: "\n")
    }

    static func age(_ seconds: Double) -> String {
        let s = Int(max(0, seconds))
        if s < 120 { return "\(s)s" }
        if s < 7200 { return "\(s / 60)m" }
        if s < 172_800 { return "\(s / 3600)h" }
        return "\(s / 86400)d"
    }

    /// One line of the table: what devices reported (names, states, releases, reasons) shown
    /// safe (TerminalText), so a device can neither write terminal escapes nor forge a line.
    static func row(_ cells: [String]) -> String {
        let widths = [20, 9, 16, 14, 9, 8, 9, 14, 16, 8, 0]
        return zip(cells.map(TerminalText.safe), widths).map { $0.padding(toLength: max($1, $0.count + 1), withPad: " ", startingAt: 0) }
            .joined().trimmingCharacters(in: .whitespaces)
    }
}
