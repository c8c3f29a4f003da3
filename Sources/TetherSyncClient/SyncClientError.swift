public import TetherProtocol

/// Why a client call failed.
public enum SyncClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached, or the WebSocket upgrade failed (transient).
    case unreachable(String)
    /// The connection is closed; the connection-level error when there was one.
    case closed(SyncError?)
    /// The session's state does not allow the request (an upload before it is active, …).
    case refused(ClientSessionStateMachine.RequestRefusal)

    public var description: String {
        switch self {
        case .unreachable(let reason): "cannot reach the sync server: \(reason)"
        case .closed(let error?): "the sync connection closed: \(error)"
        case .closed(nil): "the sync connection is closed"
        case .refused(let refusal): "request refused: \(refusal)"
        }
    }

    /// Reconnecting later may succeed (everything but a connection-level error whose action says otherwise).
    public var isTransient: Bool {
        switch self {
        case .unreachable, .closed(nil): true
        case .closed(let error?): error.isTransient
        case .refused: false
        }
    }
}
