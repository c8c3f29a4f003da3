/// The client's side of one session, as a pure state machine: events in, actions out.
///
/// ```
/// idle ─bind─▶ binding ─bound─▶ bootstrapping ─last state chunk─▶ active
///                 │ (bound without state) ───────────────────────▶  │
///                 └──── error / unbind ──▶ unbinding ◀── error / unbind
///                                            │ unbound
///                                            ▼
///                                          closed
/// ```
///
/// A server message the state does not allow is a protocol violation (109): the owner
/// closes the connection. Requests the state does not allow (an upload before the session
/// is active, or a heal chunk to a read-only partition) are refused locally.
package struct ClientSessionStateMachine: Sendable {
    package enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case idle, binding, bootstrapping, active, unbinding, closed
        package var description: String { rawValue }
    }

    package enum Event: Sendable, Hashable {
        /// Requests from the owner.
        case bindRequested(BindRequest)
        case uploadRequested(Upload)
        /// One chunk of a heal contribution (protocol 4); its answer arrives as `healed`.
        case healRequested(HealChunk)
        case unbindRequested
        /// The owner consumed state or download messages: the server may send `messages` more.
        case creditRequested(Int)
        /// Messages from the server.
        case boundReceived(BindReply)
        case stateReceived(StateChunk)
        case downloadReceived(Download)
        case healedReceived(HealReply)
        /// Protocol 9: compensating writes, and rows entering or leaving on a subscription change.
        case compensatingWritesReceived(CompensatingWrites)
        case subscriptionChunkReceived(SubscriptionChunk)
        case errorReceived(SyncError)
        case unboundReceived
        /// The connection ended.
        case connectionLost(SyncError?)
    }

    package enum RequestRefusal: Error, Sendable, Hashable, CustomStringConvertible {
        case notActive(State)
        case readOnly
        case alreadyBound(State)
        package var description: String {
            switch self {
            case .notActive(let state): "the session is \(state), not active"
            case .readOnly: "the partition is read-only for this user"
            case .alreadyBound(let state): "the session is already \(state)"
            }
        }
    }

    package enum Action: Sendable, Hashable {
        case send(ClientMessage)
        case deliver(SessionEvent)
        case refuse(RequestRefusal)
        /// A protocol violation by the server: close the connection.
        case closeConnection(SyncError)
        /// The session is over: its id may be reused.
        case forget
    }

    package let session: SessionID
    package private(set) var state: State
    /// Access granted by the last bind reply.
    package private(set) var access: PartitionAccess?

    package init(session: SessionID) {
        self.session = session
        self.state = .idle
    }

    /// For tests: a machine in any state.
    package init(session: SessionID, state: State, access: PartitionAccess? = nil) {
        self.session = session
        self.state = state
        self.access = access
    }

    package mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        // Requests.
        case (.idle, .bindRequested(let request)):
            state = .binding
            return [.send(.bind(request))]
        case (_, .bindRequested):
            return [.refuse(.alreadyBound(state))]
        case (.active, .uploadRequested(let upload)):
            return sendWrite(.upload(upload))
        case (.active, .healRequested(let chunk)):
            return sendWrite(.heal(chunk))
        case (_, .uploadRequested), (_, .healRequested):
            return [.refuse(.notActive(state))]
        case (.binding, .unbindRequested), (.bootstrapping, .unbindRequested), (.active, .unbindRequested):
            state = .unbinding
            return [.send(.unbind(session))]
        case (.idle, .unbindRequested):
            state = .closed
            return [.forget]
        case (_, .unbindRequested):
            return []
        case (.bootstrapping, .creditRequested(let messages)), (.active, .creditRequested(let messages)):
            return [.send(.credit(session, messages: messages))]
        case (_, .creditRequested):
            return []  // nothing more will arrive for this session

        // Server messages.
        case (.binding, .boundReceived(let reply)):
            access = reply.access
            state = reply.stateFollows ? .bootstrapping : .active
            return [.deliver(.bound(reply))]
        case (.bootstrapping, .stateReceived(let chunk)):
            if chunk.isLast { state = .active }
            return [.deliver(.state(chunk))]
        case (.active, .downloadReceived(let download)):
            return [.deliver(.download(download))]
        case (.active, .healedReceived(let reply)):
            return [.deliver(.healed(reply))]
        case (.active, .compensatingWritesReceived(let writes)):
            return [.deliver(.compensatingWrites(writes))]
        case (.active, .subscriptionChunkReceived(let chunk)):
            return [.deliver(.subscriptionChunk(chunk))]
        case (.binding, .errorReceived(let error)), (.bootstrapping, .errorReceived(let error)), (.active, .errorReceived(let error)):
            state = .unbinding
            return [.deliver(.error(error)), .send(.unbind(session))]
        case (.unbinding, .unboundReceived):
            state = .closed
            return [.deliver(.unbound), .forget]
        case (.unbinding, .boundReceived), (.unbinding, .stateReceived), (.unbinding, .downloadReceived), (.unbinding, .healedReceived),
            (.unbinding, .errorReceived), (.unbinding, .compensatingWritesReceived), (.unbinding, .subscriptionChunkReceived):
            return []  // sent before the server saw our unbind
        case (.closed, .boundReceived), (.closed, .stateReceived), (.closed, .downloadReceived), (.closed, .healedReceived),
            (.closed, .errorReceived), (.closed, .unboundReceived), (.closed, .compensatingWritesReceived),
            (.closed, .subscriptionChunkReceived):
            return []
        case (_, .boundReceived):
            return violation("bound")
        case (_, .stateReceived):
            return violation("state")
        case (_, .downloadReceived):
            return violation("download")
        case (_, .healedReceived):
            return violation("healed")
        case (_, .compensatingWritesReceived):
            return violation("compensating-writes")
        case (_, .subscriptionChunkReceived):
            return violation("subscription-chunk")
        case (_, .errorReceived):
            return violation("error")
        case (_, .unboundReceived):
            return violation("unbound")

        case (.closed, .connectionLost):
            return []
        case (.idle, .connectionLost):
            state = .closed
            return [.forget]
        case (_, .connectionLost(let error)):
            state = .closed
            return [.deliver(.disconnected(error)), .forget]
        }
    }

    /// Sends a message that writes to the partition, refused locally when it is read-only.
    private func sendWrite(_ message: ClientMessage) -> [Action] {
        guard access == .readwrite else { return [.refuse(.readOnly)] }
        return [.send(message)]
    }

    private mutating func violation(_ message: String) -> [Action] {
        let error = SyncError.badMessageOrder(message, in: state, session: session)
        state = .closed
        return [.closeConnection(error)]
    }
}
