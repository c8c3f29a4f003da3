/// An error sent by the server: for one session, or for the whole connection when
/// ``session`` is nil (the server then closes the connection).
package struct ErrorMessage: Sendable, Hashable {
    package var session: SessionID?
    package var error: SyncError

    package init(session: SessionID?, error: SyncError) {
        self.session = session
        self.error = error
    }
}
