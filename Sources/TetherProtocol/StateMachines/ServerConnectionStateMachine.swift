/// The server's side of one connection: the hello handshake, then routing of session
/// messages to one ``ServerSessionStateMachine`` per session id. Pure: events in, actions out.
///
/// A message before the hello, a second hello, or a session message for a session id that
/// is not bound is a protocol violation (109): the connection-level error is sent and the
/// connection closed. A hello with the server's protocol version or the one before it is
/// welcomed in the version it announced (``negotiatedProtocolVersion``); any other gets 105.
/// A message the negotiated version does not have (a `heal` on a protocol-3 connection, a
/// `report` on a protocol-5 one) is a protocol violation too.
///
/// Credential rotation (protocol 7): the server hands an enrolled device bound here a new
/// credential at most once per device until the device acknowledges it with
/// `credential-accepted` (``beginHandOver(to:)``, then ``handOver(_:digest:)`` once it is made
/// and stored, or ``handOverAbandoned(deviceID:)``); an acknowledgement of a credential not
/// handed over here is a violation.
///
/// Remote actions (protocol 8): ``offerActions(_:)`` sends the actions the server holds for
/// the device on this connection, each at most once per connection; the device answers each
/// with `action-result`, which becomes ``Action/finishAction(_:_:)``. A result for an action not
/// sent here, or sent and answered already, is a violation.
package struct ServerConnectionStateMachine: Sendable {
    package enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case awaitingHello, ready, closed
        package var description: String { rawValue }
    }

    package enum Action: Sendable, Hashable {
        case send(ServerMessage)
        /// Act for one session (see ``ServerSessionStateMachine/Action``).
        case session(SessionID, ServerSessionStateMachine.Action)
        /// Keep a device's report in the ledger (protocol 6), once its token is accepted.
        case recordReport(DeviceReport)
        /// The device wrote the credential handed to it: make it its only one.
        case completeRotation(deviceID: String, digest: [UInt8])
        /// The device answered a remote action sent on this connection: keep its outcome.
        case finishAction(RemoteAction, RemoteActionResult)
        /// Close the connection (after the sends before it).
        case close
    }

    package private(set) var state: State
    package private(set) var sessions: [SessionID: ServerSessionStateMachine] = [:]
    package let protocolVersion: Int
    /// The version this connection speaks, once the hello was accepted: the client's.
    package private(set) var negotiatedProtocolVersion: Int?
    package let software: String
    package let maxSessions: Int
    /// A credential hand-over on this connection, by device id.
    package enum HandOver: Sendable, Hashable {
        /// Being made and stored (nothing sent yet).
        case preparing
        /// Sent; the device has not acknowledged it. The digest of its secret.
        case awaitingAcknowledgement([UInt8])
    }

    package private(set) var handOvers: [String: HandOver] = [:]
    /// Remote actions sent here and not answered yet, by id.
    package private(set) var awaitedActions: [Int64: RemoteAction] = [:]
    /// Every action id sent here: an action is sent at most once per connection.
    private var sentActions: Set<Int64> = []
    /// Actions one connection may have unanswered (a device answers each in turn; more wait).
    package static let maxAwaitedActions = 64

    package init(protocolVersion: Int = TetherVersion.syncProtocol, software: String, maxSessions: Int = 1024) {
        self.state = .awaitingHello
        self.protocolVersion = protocolVersion
        self.software = software
        self.maxSessions = maxSessions
    }

    /// For tests: a connection in any state; a ready one speaks `negotiated` (by default the
    /// server's own version).
    package init(state: State, software: String = "test", maxSessions: Int = 1024, negotiated: Int = TetherVersion.syncProtocol) {
        self.init(software: software, maxSessions: maxSessions)
        self.state = state
        if state == .ready { negotiatedProtocolVersion = negotiated }
    }

    package func sessionState(_ session: SessionID) -> ServerSessionStateMachine.State? { sessions[session]?.state }

    /// A decoded message from the client.
    package mutating func received(_ message: ClientMessage) -> [Action] {
        switch (state, message) {
        case (.closed, _):
            return []
        case (.awaitingHello, .hello(let hello)):
            guard TetherVersion.acceptedByServer(speaking: protocolVersion).contains(hello.protocolVersion) else {
                return fail(.wrongProtocolVersion(client: hello.protocolVersion, server: protocolVersion))
            }
            state = .ready
            negotiatedProtocolVersion = hello.protocolVersion
            return [.send(.welcome(Welcome(protocolVersion: hello.protocolVersion, software: software)))]
        case (.awaitingHello, _):
            return fail(.badMessageOrder(message.name, in: "awaiting hello"))
        case (.ready, .hello):
            return fail(.badMessageOrder("hello", in: "ready"))
        case (.ready, .ping(let nonce)):
            return [.send(.pong(nonce))]
        case (.ready, .bind(let bind)):
            if sessions[bind.session] == nil {
                guard sessions.count < maxSessions else {
                    return fail(SyncError(.limitsExceeded, "more than \(maxSessions) sessions on one connection"))
                }
                sessions[bind.session] = ServerSessionStateMachine(session: bind.session)
            }
            return route(bind.session, .bindReceived(bind))
        case (.ready, .upload(let upload)):
            guard sessions[upload.session] != nil else { return fail(.badMessageOrder("upload", in: "unbound", session: upload.session)) }
            return route(upload.session, .uploadReceived(upload))
        case (.ready, .unbind(let session)):
            guard sessions[session] != nil else { return fail(.badMessageOrder("unbind", in: "unbound", session: session)) }
            return route(session, .unbindReceived)
        case (.ready, .credit(let session, let messages)):
            guard sessions[session] != nil else { return fail(.badMessageOrder("credit", in: "unbound", session: session)) }
            return route(session, .creditReceived(messages))
        case (.ready, .heal(let chunk)):
            guard let version = negotiatedProtocolVersion, version >= TetherVersion.healing else {
                return fail(.badMessageOrder("heal", in: "speaking sync protocol \(negotiatedProtocolVersion ?? 0)"))
            }
            guard sessions[chunk.session] != nil else { return fail(.badMessageOrder("heal", in: "unbound", session: chunk.session)) }
            return route(chunk.session, .healReceived(chunk))
        case (.ready, .report(let report)):
            guard let version = negotiatedProtocolVersion, version >= TetherVersion.deviceReports else {
                return fail(.badMessageOrder("report", in: "speaking sync protocol \(negotiatedProtocolVersion ?? 0)"))
            }
            return [.recordReport(report)]
        case (.ready, .credentialAccepted(let digest)):
            guard let version = negotiatedProtocolVersion, version >= TetherVersion.credentialRotation else {
                return fail(.badMessageOrder("credential-accepted", in: "speaking sync protocol \(negotiatedProtocolVersion ?? 0)"))
            }
            guard let deviceID = handOvers.first(where: { $0.value == .awaitingAcknowledgement(digest) })?.key else {
                return fail(.badMessageOrder("credential-accepted", in: "no credential handed over with that digest"))
            }
            handOvers[deviceID] = nil
            return [.completeRotation(deviceID: deviceID, digest: digest)]
        case (.ready, .actionResult(let result)):
            guard let version = negotiatedProtocolVersion, version >= TetherVersion.remoteActions else {
                return fail(.badMessageOrder("action-result", in: "speaking sync protocol \(negotiatedProtocolVersion ?? 0)"))
            }
            guard let action = awaitedActions.removeValue(forKey: result.id) else {
                return fail(.badMessageOrder("action-result", in: "no action \(result.id) awaiting an answer"))
            }
            return [.finishAction(action, result)]
        }
    }

    /// Sends the actions of `pending` this connection has not sent yet (oldest id first), while
    /// fewer than ``maxAwaitedActions`` await an answer: nothing on a connection that is not
    /// ready or speaks a version before 8.
    package mutating func offerActions(_ pending: [RemoteAction]) -> [Action] {
        guard state == .ready, let version = negotiatedProtocolVersion, version >= TetherVersion.remoteActions else { return [] }
        var actions: [Action] = []
        for action in pending.sorted(by: { $0.id < $1.id }) where !sentActions.contains(action.id) {
            guard awaitedActions.count < Self.maxAwaitedActions else { break }
            sentActions.insert(action.id)
            awaitedActions[action.id] = action
            actions.append(.send(.action(action)))
        }
        return actions
    }

    /// Whether this connection speaks a version with remote actions.
    package var speaksRemoteActions: Bool {
        state == .ready && (negotiatedProtocolVersion ?? 0) >= TetherVersion.remoteActions
    }

    /// Whether to prepare a new credential for `deviceID` (an enrolled device with sessions
    /// here that is due one): true when the connection is open, speaks protocol 7, and has no
    /// hand-over of that device under way; the hand-over is then ``HandOver/preparing``.
    package mutating func beginHandOver(to deviceID: String) -> Bool {
        guard state == .ready, let version = negotiatedProtocolVersion, version >= TetherVersion.credentialRotation,
            handOvers[deviceID] == nil
        else { return false }
        handOvers[deviceID] = .preparing
        return true
    }

    /// The credential prepared for a device (its digest stored as pending): sent, and awaited.
    /// Nothing when no hand-over of that device is being prepared (the connection closed).
    package mutating func handOver(_ credential: DeviceCredential, digest: [UInt8]) -> [Action] {
        guard state == .ready, handOvers[credential.deviceID] == .preparing else { return [] }
        handOvers[credential.deviceID] = .awaitingAcknowledgement(digest)
        return [.send(.credential(credential))]
    }

    /// No credential was prepared after all (not due, or the storage failed): a later bind or
    /// report may begin again.
    package mutating func handOverAbandoned(deviceID: String) {
        if handOvers[deviceID] == .preparing { handOvers[deviceID] = nil }
    }

    /// A message that could not be decoded: 102/103/104, then close.
    package mutating func decodeFailed(_ error: WireDecodeError) -> [Action] {
        guard state != .closed else { return [] }
        return fail(error.syncError)
    }

    /// A server-side event for one session (bind verdict, state progress, failure).
    package mutating func sessionEvent(_ session: SessionID, _ event: ServerSessionStateMachine.Event) -> [Action] {
        guard sessions[session] != nil else {
            // The session is gone (connection closed while its bind was checked): undo the reservation.
            if case .bindAccepted = event { return [.session(session, .release)] }
            return []
        }
        return route(session, event)
    }

    /// The connection ended (closed by the peer, the network, or us).
    package mutating func connectionClosed() -> [Action] {
        state = .closed
        handOvers = [:]
        awaitedActions = [:]
        var actions: [Action] = []
        for id in sessions.keys.sorted() {
            actions += route(id, .connectionClosed)
        }
        sessions = [:]
        return actions
    }

    private mutating func route(_ id: SessionID, _ event: ServerSessionStateMachine.Event) -> [Action] {
        guard let sessionActions = sessions.handle(event, in: id) else { return [] }
        var actions: [Action] = []
        for action in sessionActions {
            switch action {
            case .closeConnection(let error):
                return actions + fail(error)
            case .forget:
                sessions[id] = nil
                actions.append(.session(id, .forget))
            case .send(let message):
                actions.append(.send(message))
            default:
                actions.append(.session(id, action))
            }
        }
        return actions
    }

    /// Sends a connection-level error, releases every session and closes.
    private mutating func fail(_ error: SyncError) -> [Action] {
        var actions: [Action] = [.send(.error(ErrorMessage(session: nil, error: error)))]
        state = .closed
        handOvers = [:]
        awaitedActions = [:]
        for id in sessions.keys.sorted() {
            guard var machine = sessions[id] else { continue }
            for case .release in machine.handle(.connectionClosed) {
                actions.append(.session(id, .release))
            }
        }
        sessions = [:]
        actions.append(.close)
        return actions
    }
}
