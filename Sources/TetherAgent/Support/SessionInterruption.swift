import TetherProtocol

/// A session's event that ends what a download was doing (the server's error, the connection
/// gone, an unbind), thrown by the code that receives a state or a file (a bootstrap, a
/// reset's fetch). What a partition's session makes of it is ``SessionErrorVerdict``'s.
enum SessionInterruption: Error, Sendable {
    case serverError(SyncError)
    case disconnected(SyncError?)
    case unbound
}
