/// The client's side of one connection: hello sent on connect, the server's welcome or
/// connection-level error, and routing of server messages to one ``ClientSessionStateMachine``
/// per session id. Pure: events in, actions out.
package struct ClientConnectionStateMachine: Sendable {
    package enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Hello sent; binds may be pipelined before the welcome arrives.
        case awaitingWelcome
        case ready
        case closed
        package var description: String { rawValue }
    }

    package enum Action: Sendable, Hashable {
        case send(ClientMessage)
        case deliver(SessionID, SessionEvent)
        case refuse(SessionID, ClientSessionStateMachine.RequestRefusal)
        /// The server's welcome (its software and protocol version).
        case connected(Welcome)
        case pong(UInt64)
        /// A new credential for an enrolled device (protocol 7): the owner writes it to the
        /// token file, then sends ``ClientMessage/credentialAccepted(digest:)``.
        case credential(DeviceCredential)
        /// Something an operator asks of this device (protocol 8): the owner runs it under its
        /// own rules and sends ``ClientMessage/actionResult(_:)``.
        case action(RemoteAction)
        /// Close the connection: the error is the server's connection-level error, or the
        /// protocol violation the server committed.
        case close(SyncError?)
    }

    package private(set) var state: State = .awaitingWelcome
    package private(set) var sessions: [SessionID: ClientSessionStateMachine] = [:]

    package init() {}

    /// For tests: a connection in any state.
    package init(state: State) { self.state = state }

    /// The hello to send first.
    package static func hello(software: String) -> ClientMessage { .hello(Hello(software: software)) }

    package func sessionState(_ session: SessionID) -> ClientSessionStateMachine.State? { sessions[session]?.state }

    /// A request of the owner for one session.
    package mutating func request(_ session: SessionID, _ event: ClientSessionStateMachine.Event) -> [Action] {
        guard state != .closed else {
            return [.refuse(session, .notActive(.closed))]
        }
        if sessions[session] == nil {
            guard case .bindRequested = event else { return [.refuse(session, .notActive(.idle))] }
            sessions[session] = ClientSessionStateMachine(session: session)
        }
        return route(session, event)
    }

    /// A decoded message from the server.
    package mutating func received(_ message: ServerMessage) -> [Action] {
        switch (state, message) {
        case (.closed, _):
            return []
        case (.awaitingWelcome, .welcome(let welcome)):
            guard welcome.protocolVersion == TetherVersion.syncProtocol else {
                return lost(.wrongProtocolVersion(client: TetherVersion.syncProtocol, server: welcome.protocolVersion))
            }
            state = .ready
            return [.connected(welcome)]
        case (_, .error(let error)) where error.session == nil:
            return lost(error.error)
        case (.awaitingWelcome, _):
            return lost(.badMessageOrder(message.name, in: State.awaitingWelcome))
        case (.ready, .welcome):
            return lost(.badMessageOrder("welcome", in: State.ready))
        case (.ready, .pong(let nonce)):
            return [.pong(nonce)]
        case (.ready, .credential(let credential)):
            return [.credential(credential)]
        case (.ready, .action(let action)):
            return [.action(action)]
        case (.ready, .bound(let reply)):
            return routeServer(reply.session, .boundReceived(reply), name: "bound")
        case (.ready, .state(let chunk)):
            return routeServer(chunk.session, .stateReceived(chunk), name: "state")
        case (.ready, .download(let download)):
            return routeServer(download.session, .downloadReceived(download), name: "download")
        case (.ready, .healed(let reply)):
            return routeServer(reply.session, .healedReceived(reply), name: "healed")
        case (.ready, .compensatingWrites(let writes)):
            return routeServer(writes.session, .compensatingWritesReceived(writes), name: "compensating-writes")
        case (.ready, .subscriptionChunk(let chunk)):
            return routeServer(chunk.session, .subscriptionChunkReceived(chunk), name: "subscription-chunk")
        case (.ready, .error(let error)):
            return routeServer(error.session ?? 0, .errorReceived(error.error), name: "error")
        case (.ready, .unbound(let session)):
            return routeServer(session, .unboundReceived, name: "unbound")
        }
    }

    /// A message from the server that could not be decoded: close.
    package mutating func decodeFailed(_ error: WireDecodeError) -> [Action] {
        guard state != .closed else { return [] }
        return lost(error.syncError)
    }

    /// The connection ended without a connection-level error.
    package mutating func connectionLost() -> [Action] {
        guard state != .closed else { return [] }
        state = .closed
        return disconnectAll(nil)
    }

    private mutating func routeServer(_ session: SessionID, _ event: ClientSessionStateMachine.Event, name: String) -> [Action] {
        guard sessions[session] != nil else {
            return lost(.badMessageOrder(name, in: "unbound", session: session))
        }
        return route(session, event)
    }

    private mutating func route(_ id: SessionID, _ event: ClientSessionStateMachine.Event) -> [Action] {
        guard let sessionActions = sessions.handle(event, in: id) else { return [] }
        var actions: [Action] = []
        for action in sessionActions {
            switch action {
            case .send(let message): actions.append(.send(message))
            case .deliver(let event): actions.append(.deliver(id, event))
            case .refuse(let refusal): actions.append(.refuse(id, refusal))
            case .forget: sessions[id] = nil
            case .closeConnection(let error): return actions + lost(error)
            }
        }
        return actions
    }

    /// Ends every session with `disconnected(error)` and closes.
    private mutating func lost(_ error: SyncError) -> [Action] {
        state = .closed
        return disconnectAll(error) + [.close(error)]
    }

    private mutating func disconnectAll(_ error: SyncError?) -> [Action] {
        var actions: [Action] = []
        for id in sessions.keys.sorted() {
            guard var machine = sessions[id] else { continue }
            for case .deliver(let event) in machine.handle(.connectionLost(error)) {
                actions.append(.deliver(id, event))
            }
        }
        sessions = [:]
        return actions
    }
}
