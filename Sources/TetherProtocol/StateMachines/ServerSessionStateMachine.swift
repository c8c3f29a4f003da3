/// The server's side of one session, as a pure state machine: events in, actions out.
///
/// ```
/// awaitingBind ─bind─▶ binding ─accepted─▶ bootstrapping ─last state chunk─▶ active
///                         │                      │                             │
///                      rejected            failed/unbind                 failed/unbind
///                         ▼                      ▼                             ▼
///                      closing ◀── failed ── (error sent, waiting for unbind) ─unbind─▶ closed
/// ```
///
/// A message in a state that does not allow it is a protocol violation (109), which closes
/// the whole connection. After the server sent a session error the client must unbind;
/// uploads and heal chunks still in flight are ignored meanwhile (docs/protocol.md).
package struct ServerSessionStateMachine: Sendable {
    package enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case awaitingBind, binding, bootstrapping, active, closing, closed
        package var description: String { rawValue }
    }

    package enum Event: Sendable, Hashable {
        /// From the network.
        case bindReceived(BindRequest)
        case uploadReceived(Upload)
        case unbindReceived
        /// The client may receive `messages` more state or download messages (protocol 2).
        case creditReceived(Int)
        /// A chunk of a device's heal contribution (protocol 4; the connection checked the version).
        case healReceived(HealChunk)
        /// From the server: the verdict on the bind (identity checked, client file reserved).
        case bindAccepted(BindReply, downloadAfter: ServerVersion)
        case bindRejected(SyncError)
        /// The state streamer is about to send a chunk (reported before writing it, so an
        /// upload sent after the last chunk always finds the session active).
        case sendingStateChunk(isLast: Bool)
        /// A server-side failure of this session: grant revoked, upload refused, storage error.
        case failed(SyncError)
        /// From the server: the storage's answer to a heal chunk, to send if the session is
        /// still active (it may have failed or ended while the chunk was applied).
        case healAnswered(HealReply)
        case connectionClosed
    }

    package enum Action: Sendable, Hashable {
        /// Check token, grant and identity; reserve the client file; answer with bindAccepted/bindRejected.
        case authorizeBind(BindRequest)
        case send(ServerMessage)
        /// Stream the partition's state (then downloads after its version).
        case streamState
        /// Stream history entries after `version`, then new ones as they are accepted.
        case streamDownloads(after: ServerVersion)
        /// Validate and commit an upload (it is acknowledged through the download stream).
        case integrate(Upload)
        /// Check and apply a heal chunk, then report the answer (``Event/healAnswered(_:)``) or
        /// fail the session.
        case heal(HealChunk)
        /// Let the session's streamer send `messages` more state or download messages.
        case grantCredit(Int)
        /// Stop streaming and release the client file reserved by the bind.
        case release
        /// Remove the session from the connection's table: its id may be bound again.
        case forget
        /// A protocol violation: send this connection-level error and close the connection.
        case closeConnection(SyncError)
    }

    package let session: SessionID
    package private(set) var state: State

    package init(session: SessionID) {
        self.session = session
        self.state = .awaitingBind
    }

    /// For tests: a machine in any state.
    package init(session: SessionID, state: State) {
        self.session = session
        self.state = state
    }

    package mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        // Network messages.
        case (.awaitingBind, .bindReceived(let request)):
            state = .binding
            return [.authorizeBind(request)]
        case (.active, .uploadReceived(let upload)):
            return [.integrate(upload)]
        case (.active, .healReceived(let chunk)):
            return [.heal(chunk)]
        case (.bootstrapping, .unbindReceived), (.active, .unbindReceived):
            state = .closed
            return [.release, .send(.unbound(session)), .forget]
        case (.closing, .unbindReceived):
            state = .closed
            return [.send(.unbound(session)), .forget]
        case (.closing, .uploadReceived), (.closing, .creditReceived), (.closing, .healReceived):
            return []  // sent before the client saw our error
        case (.bootstrapping, .creditReceived(let messages)), (.active, .creditReceived(let messages)):
            return [.grantCredit(messages)]
        case (.closed, .bindReceived), (.closed, .uploadReceived), (.closed, .unbindReceived), (.closed, .creditReceived),
            (.closed, .healReceived):
            return []  // a forgotten session never receives these; the connection routes them
        case (_, .bindReceived):
            return violation("bind")
        case (_, .uploadReceived):
            return violation("upload")
        case (_, .unbindReceived):
            return violation("unbind")
        case (_, .creditReceived):
            return violation("credit")
        case (_, .healReceived):
            return violation("heal")

        // The bind verdict.
        case (.binding, .bindAccepted(let reply, let after)):
            if reply.stateFollows {
                state = .bootstrapping
                return [.send(.bound(reply)), .streamState]
            }
            state = .active
            return [.send(.bound(reply)), .streamDownloads(after: after)]
        case (.binding, .bindRejected(let error)), (.binding, .failed(let error)):
            state = .closing
            return [.send(.error(ErrorMessage(session: session, error: error)))]
        case (.closed, .bindAccepted):
            return [.release]  // the connection closed while the bind was being checked
        case (_, .bindAccepted), (_, .bindRejected):
            return []

        // Bootstrapping.
        case (.bootstrapping, .sendingStateChunk(let isLast)):
            if isLast { state = .active }
            return []
        case (_, .sendingStateChunk):
            return []

        // A heal chunk's answer.
        case (.active, .healAnswered(let reply)):
            return [.send(.healed(reply))]
        case (_, .healAnswered):
            return []  // the session failed or ended meanwhile: nobody waits for the answer

        // Server-side failures and disconnects.
        case (.bootstrapping, .failed(let error)), (.active, .failed(let error)):
            state = .closing
            return [.release, .send(.error(ErrorMessage(session: session, error: error)))]
        case (.awaitingBind, .failed):
            state = .closed
            return [.forget]
        case (.closing, .failed), (.closed, .failed):
            return []
        case (.bootstrapping, .connectionClosed), (.active, .connectionClosed):
            state = .closed
            return [.release]
        case (_, .connectionClosed):
            state = .closed
            return []
        }
    }

    private mutating func violation(_ message: String) -> [Action] {
        let error = SyncError.badMessageOrder(message, in: state, session: session)
        let wasBound = state == .bootstrapping || state == .active
        state = .closed
        return wasBound ? [.release, .closeConnection(error)] : [.closeConnection(error)]
    }
}
