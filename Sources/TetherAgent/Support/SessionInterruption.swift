import TetherProtocol

/// A session's event that ends what a download was doing (the server's error, the connection
/// gone, an unbind), thrown by the code that receives a state or a file (a bootstrap, a
/// reset's fetch). What a partition's session makes of it is ``SessionErrorVerdict``'s.
enum SessionInterruption: Error, Sendable {
    case serverError(SyncError)
    case disconnected(SyncError?)
    case unbound

    /// What an event ending a download stands for: the server's error, the connection gone, and
    /// anything else (an unbind, or a first event other than the bind's reply) as an unbind.
    init(_ event: SessionEvent) {
        switch event {
        case .error(let error): self = .serverError(error)
        case .disconnected(let error): self = .disconnected(error)
        default: self = .unbound
        }
    }
}
