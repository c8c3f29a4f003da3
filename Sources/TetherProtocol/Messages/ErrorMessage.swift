/// An error sent by the server: for one session, or for the whole connection when
/// ``session`` is nil (the server then closes the connection).
public struct ErrorMessage: Sendable, Hashable {
    public var session: SessionID?
    public var error: SyncError

    public init(session: SessionID?, error: SyncError) {
        self.session = session
        self.error = error
    }
}
