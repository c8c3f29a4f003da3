/// The result of `diagnostics` (docs/control-protocol.md), and the report a remote
/// `diagnostics` action sends to the server: what an operator needs to see why a device does
/// not sync without a shell on it. Never a row of a store, a token, a credential or a key:
/// the configuration names files, not what they hold. At most 256 KiB as JSON: the oldest
/// events are left out until it fits (`events_omitted`, `note`).
public struct DiagnosticsReport: Sendable, Hashable, Codable {
    /// The agent's release (`0.1.0`).
    public var release: String
    /// When this run of the agent started (RFC 3339 UTC), and for how long it has run.
    public var startedAt: String
    public var uptimeSeconds: Int64
    /// What `status` answers now (the server's URL without user or query).
    public var status: StatusReport
    /// The running configuration with secrets removed: every key's value, files by path.
    public var configuration: JSONValue
    /// The last events (at most 200), oldest first.
    public var events: [AgentEvent]
    /// The older of those 200 events left out to keep the report within its bound.
    public var eventsOmitted: Int
    /// Says what was left out, and why; nil when nothing was.
    public var note: String?

    public init(
        release: String, startedAt: String, uptimeSeconds: Int64, status: StatusReport, configuration: JSONValue, events: [AgentEvent],
        eventsOmitted: Int = 0, note: String? = nil
    ) {
        self.release = release
        self.startedAt = startedAt
        self.uptimeSeconds = uptimeSeconds
        self.status = status
        self.configuration = configuration
        self.events = events
        self.eventsOmitted = eventsOmitted
        self.note = note
    }

    enum CodingKeys: String, CodingKey {
        case release, status, configuration, events, note
        case startedAt = "started_at"
        case uptimeSeconds = "uptime_seconds"
        case eventsOmitted = "events_omitted"
    }
}
