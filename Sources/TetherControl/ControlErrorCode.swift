/// Why the agent refused a control request, for programs: a client library turns each into an
/// error of its own (docs/control-protocol.md, "Errors"). Codes are never renamed; a newer
/// agent may add some, which a client treats as `failed`.
public enum ControlErrorCode: Sendable, Hashable, Codable {
    /// The request is malformed or names something illegal (exit status 2).
    case badRequest
    /// No partition of that name is configured.
    case unknownPartition
    /// The caller may only read and asked for a command that changes the agent (exit status 4).
    case permissionDenied
    /// The client speaks a control protocol newer than the agent's.
    case protocolTooNew
    /// `wait-synced` did not see the partition synced before its timeout.
    case timedOut
    /// The agent is stopping, or cannot serve this now (too many followers).
    case unavailable
    /// The command was understood and failed (its message says why).
    case failed
    /// A code this release does not know (a newer agent's).
    case other(String)

    public init(rawValue: String) {
        self =
            switch rawValue {
            case "bad-request": .badRequest
            case "unknown-partition": .unknownPartition
            case "permission-denied": .permissionDenied
            case "protocol-too-new": .protocolTooNew
            case "timed-out": .timedOut
            case "unavailable": .unavailable
            case "failed": .failed
            default: .other(rawValue)
            }
    }

    public var rawValue: String {
        switch self {
        case .badRequest: "bad-request"
        case .unknownPartition: "unknown-partition"
        case .permissionDenied: "permission-denied"
        case .protocolTooNew: "protocol-too-new"
        case .timedOut: "timed-out"
        case .unavailable: "unavailable"
        case .failed: "failed"
        case .other(let code): code
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
