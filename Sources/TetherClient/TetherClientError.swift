public import TetherControl

/// Why a ``TetherClient`` call failed. Each case says what the application can do about it.
public enum TetherClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens on the control socket: `tetherd` is not running (or the path is wrong).
    /// Transient: try again later; ``TetherClient/events(after:partition:)`` does by itself.
    case agentNotRunning(socketPath: String, reason: String)
    /// The agent refused the caller: the socket's permissions, or a command that changes the
    /// agent from a caller with the `reader` role. Not transient: run as a member of the
    /// operator group (changing commands) or of the agent's group (reading).
    case permissionDenied(String)
    /// The agent speaks an older control protocol than this library needs (`agent` is its
    /// version): upgrade `tetherd`.
    case protocolTooNew(agent: Int, client: Int)
    /// No partition of that name is configured in `tetherd.toml`.
    case unknownPartition(String)
    /// No answer (or not synced, for `waitSynced`) within the time allowed. Transient.
    case timedOut(String)
    /// Another refusal, with the agent's code and message.
    case refused(code: ControlErrorCode, message: String)
    /// The agent could not be reached for another reason, or answered something unreadable.
    case unreachable(String)

    /// Whether trying again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .agentNotRunning, .timedOut, .unreachable: true
        case .refused(let code, _): code == .unavailable
        case .permissionDenied, .protocolTooNew, .unknownPartition: false
        }
    }

    public var description: String {
        switch self {
        case .agentNotRunning(let path, let reason): "tetherd is not running at \(path): \(reason)"
        case .permissionDenied(let message): message
        case .protocolTooNew(let agent, let client):
            "tetherd speaks control protocol \(agent); this library needs \(client): upgrade tetherd"
        case .unknownPartition(let message): message
        case .timedOut(let message): message
        case .refused(let code, let message): "\(message) (\(code.rawValue))"
        case .unreachable(let message): message
        }
    }

    /// The error a refusal from the agent stands for.
    static func refusal(_ response: ControlResponse) -> TetherClientError {
        let message = response.error ?? "tetherd refused the request"
        switch response.code {
        case .permissionDenied: return .permissionDenied(message)
        case .unknownPartition: return .unknownPartition(message)
        case .timedOut: return .timedOut(message)
        case .protocolTooNew: return .protocolTooNew(agent: 0, client: ControlProtocol.version)
        case .some(let code): return .refused(code: code, message: message)
        // Control protocol 1 sent no code: its exit statuses say as much.
        case nil:
            if response.exitCode == ControlResponse.permissionDeniedExitCode { return .permissionDenied(message) }
            return .refused(code: response.exitCode == 2 ? .badRequest : .failed, message: message)
        }
    }

    /// The error a failure to talk to the agent stands for.
    static func transport(_ error: ControlClientError, socketPath: String) -> TetherClientError {
        if error.nobodyListens { return .agentNotRunning(socketPath: socketPath, reason: error.description) }
        if error.permissionDenied { return .permissionDenied(error.description) }
        if error.isTimeout { return .timedOut(error.description) }
        return .unreachable(error.description)
    }
}
