/// How one hook run ended.
public enum HookResult: Sendable, Hashable, Codable {
    case succeeded
    case failed(exitStatus: Int32)
    case killedBySignal(Int32)
    case timedOut
    /// The hook could not be started (missing, refused, exec failed).
    case notStarted(reason: String)

    public var isSuccess: Bool { self == .succeeded }

    public var summary: String {
        switch self {
        case .succeeded: "exit 0"
        case .failed(let status): "exit \(status)"
        case .killedBySignal(let signal): "killed by signal \(signal)"
        case .timedOut: "timed out"
        case .notStarted(let reason): "not started: \(reason)"
        }
    }
}
