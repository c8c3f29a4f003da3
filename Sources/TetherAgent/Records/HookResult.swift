/// How one hook run ended.
package enum HookResult: Sendable, Hashable, Codable {
    case succeeded
    case failed(exitStatus: Int32)
    case killedBySignal(Int32)
    case timedOut
    /// The hook could not be started (missing, refused, exec failed).
    case notStarted(reason: String)

    package var isSuccess: Bool { self == .succeeded }

    package var summary: String {
        switch self {
        case .succeeded: "exit 0"
        case .failed(let status): "exit \(status)"
        case .killedBySignal(let signal): "killed by signal \(signal)"
        case .timedOut: "timed out"
        case .notStarted(let reason): "not started: \(reason)"
        }
    }
}
