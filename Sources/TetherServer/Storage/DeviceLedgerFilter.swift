import Foundation

/// Which ledger entries a page, a count or a remote-action selection covers (docs/server.md,
/// "Device ledger"), the same on both storages. Every field narrows; nil fields do not.
package struct DeviceLedgerFilter: Sendable, Hashable {
    /// A partition name, or a glob: `*` any run of characters, `?` exactly one (as in grants);
    /// every other character is itself, `%`, `_`, `[` and `\` included.
    package var partition: String?
    /// A ledger state (``DeviceLedgerEntry/states``) or a health class
    /// (``DeviceLedgerHealth/filterNames``: `unhealthy`, `wedged`, `erroring`, `stale`).
    package var state: String?
    /// Only entries reported before this (`--stale`).
    package var reportedBefore: Date?
    package var deviceID: String?
    package var user: String?
    /// Device name or id contains this, ASCII letters in either case.
    package var text: String?

    package init(
        partition: String? = nil, state: String? = nil, reportedBefore: Date? = nil, deviceID: String? = nil, user: String? = nil,
        text: String? = nil
    ) {
        self.partition = partition
        self.state = state
        self.reportedBefore = reportedBefore
        self.deviceID = deviceID
        self.user = user
        self.text = text
    }

    /// The filter without its state: what the counts by state of a page are over.
    package var withoutState: DeviceLedgerFilter {
        var copy = self
        copy.state = nil
        return copy
    }

    /// The states and health classes a filter accepts.
    package static let stateNames = DeviceLedgerEntry.states + DeviceLedgerHealth.filterNames

    /// Whether `entry` matches, at these cutoffs: what the storages' SQL does, in Swift (tests).
    package func matches(_ entry: DeviceLedgerEntry, staleBefore: Date, wedgedBefore: Date) -> Bool {
        if let partition, !Self.globMatches(partition, entry.partition) { return false }
        if let state {
            let health = DeviceLedgerHealth(entry, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
            switch state {
            case DeviceLedgerHealth.unhealthyName: if health == .healthy { return false }
            case DeviceLedgerHealth.wedged.name: if !entry.isWedged(before: wedgedBefore) { return false }
            case DeviceLedgerHealth.erroring.name: if !DeviceLedgerHealth.isErroring(entry, staleBefore: staleBefore) { return false }
            case DeviceLedgerHealth.stale.name: if entry.reportedAt >= staleBefore { return false }
            default: if entry.state != state { return false }
            }
        }
        if let reportedBefore, entry.reportedAt >= reportedBefore { return false }
        if let deviceID, entry.deviceID != deviceID { return false }
        if let user, entry.user != user { return false }
        if let text {
            let needle = Self.asciiLowercased(text)
            if !needle.isEmpty, !Self.asciiLowercased(entry.deviceName).contains(needle), !Self.asciiLowercased(entry.deviceID).contains(needle) {
                return false
            }
        }
        return true
    }

    /// Whether `pattern` has a wildcard (`*` or `?`): else it is an exact name.
    package static func isGlob(_ pattern: String) -> Bool {
        pattern.contains("*") || pattern.contains("?")
    }

    /// Whether the glob `pattern` matches all of `name`, over Unicode scalars (one `?`, one scalar).
    package static func globMatches(_ pattern: String, _ name: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let n = Array(name.unicodeScalars)
        var (pi, ni) = (0, 0)
        var star: Int? = nil
        var resume = 0
        while ni < n.count {
            if pi < p.count, p[pi] == "?" || (p[pi] != "*" && p[pi] == n[ni]) {
                pi += 1
                ni += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                resume = ni
                pi += 1
            } else if let s = star {
                pi = s + 1
                resume += 1
                ni = resume
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }

    /// The glob as an SQLite `GLOB` pattern: `*` and `?` stay wildcards, a literal `[` becomes `[[]`.
    package static func sqliteGlob(_ pattern: String) -> String {
        pattern.replacingOccurrences(of: "[", with: "[[]")
    }

    /// The glob as a PostgreSQL `LIKE … ESCAPE '\'` pattern: `\`, `%` and `_` escaped, `*` → `%`, `?` → `_`.
    package static func postgresLike(_ pattern: String) -> String {
        var out = ""
        for character in pattern {
            switch character {
            case "\\", "%", "_": out += "\\" + String(character)
            case "*": out += "%"
            case "?": out += "_"
            default: out.append(character)
            }
        }
        return out
    }

    /// Only ASCII letters lowered: what SQLite's `lower()` does, and `translate` on PostgreSQL.
    package static func asciiLowercased(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { s in
            (s.value >= 0x41 && s.value <= 0x5A) ? Unicode.Scalar(s.value + 0x20)! : s
        }))
    }
}

/// Where an entry stands for the `health` sort, most urgent first (docs/server.md, "Device
/// ledger"): wedged, then waiting for a reset, then erroring, then stale, then the rest.
package enum DeviceLedgerHealth: Int, Sendable, Hashable, CaseIterable {
    case wedged = 0
    case resetPending = 1
    /// Its last error is newer than its last acknowledged upload and newer than the stale cutoff.
    case erroring = 2
    case stale = 3
    case healthy = 4

    package var name: String {
        switch self {
        case .wedged: "wedged"
        case .resetPending: "reset-pending"
        case .erroring: "erroring"
        case .stale: "stale"
        case .healthy: "healthy"
        }
    }

    /// The filter's name of "any class but healthy".
    package static let unhealthyName = "unhealthy"
    /// The health classes a filter's state may name (`reset-pending` is a state already).
    package static let filterNames = [unhealthyName, "wedged", "erroring", "stale"]

    package init(_ entry: DeviceLedgerEntry, staleBefore: Date, wedgedBefore: Date) {
        self =
            if entry.isWedged(before: wedgedBefore) { .wedged }
            else if entry.state == "reset-pending" { .resetPending }
            else if Self.isErroring(entry, staleBefore: staleBefore) { .erroring }
            else if entry.reportedAt < staleBefore { .stale }
            else { .healthy }
    }

    package static func isErroring(_ entry: DeviceLedgerEntry, staleBefore: Date) -> Bool {
        guard let at = entry.lastErrorAt else { return false }
        return at > (entry.lastUploadAt ?? Date(timeIntervalSince1970: 0)) && at >= staleBefore
    }
}
