/// The result of `wait-synced`.
public struct WaitSyncedReport: Sendable, Hashable, Codable {
    public var partition: String
    public var serverVersion: Int64

    public init(partition: String, serverVersion: Int64) {
        self.partition = partition
        self.serverVersion = serverVersion
    }

    enum CodingKeys: String, CodingKey { case partition, serverVersion = "server_version" }
}

/// The result of `pause` (`paused`) and `resume` (`connecting`).
public struct PartitionStateReport: Sendable, Hashable, Codable {
    public var partition: String
    public var state: String

    public init(partition: String, state: String) {
        self.partition = partition
        self.state = state
    }
}

/// The result of `log-level`.
public struct LogLevelReport: Sendable, Hashable, Codable {
    public var logLevel: String
    public init(logLevel: String) { self.logLevel = logLevel }
    enum CodingKeys: String, CodingKey { case logLevel = "log_level" }
}

/// The result of `metrics`: the Prometheus text format.
public struct MetricsReport: Sendable, Hashable, Codable {
    public var text: String
    public init(text: String) { self.text = text }
}

/// The result of `events` without `follow`: the kept events, oldest first. Events of a kind
/// this release does not know (a newer daemon's) are skipped when read, as docs/events.md asks.
public struct EventsReport: Sendable, Hashable, Codable {
    public var events: [AgentEvent]
    public init(events: [AgentEvent]) { self.events = events }

    enum CodingKeys: String, CodingKey { case events }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        events = try container.decode([JSONValue].self, forKey: .events).compactMap(AgentEvent.init)
    }
}

/// The first line answering `events` with `follow`; the events follow one per line.
public struct FollowReport: Sendable, Hashable, Codable {
    public var follow: Bool
    public init() { follow = true }
}

/// The result of `hello`: who answers and what it speaks.
public struct HelloReport: Sendable, Hashable, Codable {
    /// `tetherd`'s release (`0.1.0`).
    public var release: String
    /// ``ControlProtocol/version`` of the agent.
    public var protocolVersion: Int
    public var capabilities: [String]
    /// `operator` (may change the agent: pause, resume, reset initiate, log level) or
    /// `reader` (may only read), as the socket's peer credentials decide.
    public var role: String
    /// The highest event number so far (0: none yet): `events` with `after` set to it returns
    /// only what comes next.
    public var lastEventSeq: UInt64

    public init(release: String, protocolVersion: Int, capabilities: [String], role: String, lastEventSeq: UInt64) {
        self.release = release
        self.protocolVersion = protocolVersion
        self.capabilities = capabilities
        self.role = role
        self.lastEventSeq = lastEventSeq
    }

    enum CodingKeys: String, CodingKey {
        case release, capabilities, role
        case protocolVersion = "protocol_version"
        case lastEventSeq = "last_event_seq"
    }
}
