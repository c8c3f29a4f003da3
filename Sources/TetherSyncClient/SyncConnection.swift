import Logging
import NIOCore
import NIOWebSocket
import TetherProtocol
import WSCore

/// A client connection to a tether-server, carrying several partitions' sessions
/// (multiplexed by session id). Driven by ``ClientConnectionStateMachine``; open one with
/// ``run(_:logger:_:)``.
package actor SyncConnection {
    let writer: WebSocketOutboundWriter
    let logger: Logger
    private var machine = ClientConnectionStateMachine()
    private var sessions: [SessionID: AsyncStream<SessionEvent>.Continuation] = [:]
    private var pongWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    private var receivedPongs: Set<UInt64> = []
    private var nextNonce: UInt64 = 1
    /// The server's welcome, once received.
    package private(set) var welcome: Welcome?
    /// Why the connection closed, once it has.
    package private(set) var closeReason: SyncError?
    /// Set when the server broke the protocol (a message that cannot be decoded, one out of
    /// order, an oversize one, a welcome with another protocol version): the error this side
    /// closed the connection with. A connection-level error the server sent is not one.
    package private(set) var protocolViolation: SyncError?
    private var closing = false
    private nonisolated let ended = ConnectionEndSignal()
    private nonisolated let credentialStream = AsyncStream.makeStream(of: DeviceCredential.self)

    /// New credentials the server hands this device (protocol 7, credential rotation), in the
    /// order it sent them; ends with the connection. Write each to the token file, then
    /// ``acknowledgeCredential(digest:)``.
    package nonisolated var credentials: AsyncStream<DeviceCredential> { credentialStream.stream }
    private nonisolated let actionStream = AsyncStream.makeStream(of: RemoteAction.self)

    /// What an operator asks of this device from the server (protocol 8, remote actions), in
    /// the order the server sent them; ends with the connection. Run each under the agent's own
    /// rules, then ``answerAction(_:)``.
    package nonisolated var actions: AsyncStream<RemoteAction> { actionStream.stream }

    init(writer: WebSocketOutboundWriter, logger: Logger) {
        self.writer = writer
        self.logger = logger
    }

    /// Binds a partition on session `request.session`; read the outcome from the session's events.
    package func bind(_ request: BindRequest) async throws -> SyncSession {
        let (stream, continuation) = AsyncStream<SessionEvent>.makeStream()
        guard sessions[request.session] == nil else {
            throw SyncClientError.refused(.alreadyBound(machine.sessionState(request.session) ?? .active))
        }
        sessions[request.session] = continuation
        do {
            try await perform(machine.request(request.session, .bindRequested(request)))
        } catch {
            sessions[request.session] = nil
            continuation.finish()
            throw error
        }
        let id = request.session
        let events = SessionEvents(stream) { [weak self] messages in
            // A grant that cannot be sent: the connection is gone, and the session with it.
            try? await self?.request(id, .creditRequested(messages))
        }
        return SyncSession(id: request.session, partition: request.partition, events: events, connection: self)
    }

    /// Sends a protocol ping and waits for the pong (or the end of the connection).
    package func ping() async throws {
        guard !isClosed else { throw SyncClientError.closed(closeReason) }
        let nonce = nextNonce
        nextNonce += 1
        try await send(.ping(nonce))
        if receivedPongs.remove(nonce) != nil { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if isClosed {
                continuation.resume(throwing: SyncClientError.closed(closeReason))
            } else {
                pongWaiters[nonce] = continuation
            }
        }
    }

    package var isClosed: Bool { machine.state == .closed }

    /// Tells the server the credential whose secret has this SHA-256 is written: the old one
    /// may stop working. Throws when the connection is gone (the next bind with the new
    /// credential completes the rotation instead).
    package func acknowledgeCredential(digest: [UInt8]) async throws {
        guard !isClosed else { throw SyncClientError.closed(closeReason) }
        try await send(.credentialAccepted(digest: digest))
    }

    /// Tells the server what became of a remote action it sent. Throws when the connection is
    /// gone (the server sends the action again on the next connection).
    package func answerAction(_ result: RemoteActionResult) async throws {
        guard !isClosed else { throw SyncClientError.closed(closeReason) }
        try await send(.actionResult(result))
    }

    /// Sends a device report for the server's ledger (protocol 6; no answer). Sent only once
    /// the server's welcome says the connection speaks a version with reports: before it, or
    /// to an older server, nothing is sent and false is returned.
    @discardableResult
    package func report(_ report: DeviceReport) async throws -> Bool {
        guard !isClosed else { throw SyncClientError.closed(closeReason) }
        guard let welcome, welcome.protocolVersion >= TetherVersion.deviceReports else { return false }
        try await send(.report(report))
        return true
    }

    /// Returns once the connection has ended (the server closed it, it broke, or ``close()``
    /// was answered), or when the waiting task is cancelled.
    package nonisolated func waitUntilClosed() async { await ended.wait() }

    func request(_ session: SessionID, _ event: ClientSessionStateMachine.Event) async throws {
        try await perform(machine.request(session, event))
    }

    /// Sends the hello. When it cannot be sent, the server closed the connection at once (its
    /// 101, a frame and its FIN can arrive in one read): what it sent is the cause, so this
    /// waits for the read side to reach its conclusion (and log it) and fails with it.
    func sendHello(_ software: String) async throws {
        do {
            try await send(ClientConnectionStateMachine.hello(software: software))
        } catch SyncClientError.closed(nil) {
            await waitUntilClosed()
            throw SyncClientError.closed(closeReason)
        }
    }

    /// Feeds the server's frames through the machine until the connection ends.
    func readLoop(_ inbound: WebSocketInboundStream) async {
        var assembler = MessageAssembler()
        do {
            reading: for try await frame in inbound {
                let kind: MessageAssembler.FrameKind =
                    switch frame.opcode {
                    case .text: .text
                    case .continuation: .continuation
                    default: .binary
                    }
                // What the machine says to a received message can only fail to be sent (the
                // connection is gone, and this loop ends with it): nothing to report twice.
                switch assembler.append(kind, frame.data.readableBytesView, fin: frame.fin) {
                case .incomplete:
                    continue
                case .failure(let error):
                    try? await perform(violation(machine.decodeFailed(error)))  // as above
                case .message(let bytes):
                    switch Result(catching: { () throws(WireDecodeError) in try ServerMessage.decode(bytes) }) {
                    case .success(.error(let message)) where message.session == nil:
                        try? await perform(machine.received(.error(message)))  // the server's own error: not a violation
                    case .success(let message): try? await perform(violation(machine.received(message)))  // as above
                    case .failure(let error): try? await perform(violation(machine.decodeFailed(error)))  // as above
                    }
                }
                if machine.state == .closed { break reading }
            }
            if !closing && closeReason == nil {
                logger.warning(
                    "the sync server closed the connection without an error (a restart, a proxy, or a stream cut in the middle of a frame); reconnecting with backoff")
            }
        } catch is CancellationError {
            // This side is stopping: nothing went wrong with the server.
        } catch {
            // Invalid WebSocket framing from the server, or the connection failed under us.
            logger.warning("reading from the sync server failed (invalid WebSocket data or a broken connection): \(error); the connection is closed")
        }
        connectionEnded()
    }

    /// Remembers the error this side closes the connection with, when `actions` close it:
    /// the server broke the protocol.
    private func violation(_ actions: [ClientConnectionStateMachine.Action]) -> [ClientConnectionStateMachine.Action] {
        for case .close(let error?) in actions where protocolViolation == nil { protocolViolation = error }
        return actions
    }

    /// Closes the WebSocket (normal closure); sessions get `disconnected`.
    package func close() async {
        guard !closing else { return }
        closing = true
        try? await writer.close(.normalClosure, reason: nil)  // gone already: the read loop ends it either way
    }

    func connectionEnded() {
        for action in machine.connectionLost() {
            if case .deliver(let id, let event) = action { deliver(id, event) }
        }
        for continuation in sessions.values { continuation.finish() }
        sessions = [:]
        for waiter in pongWaiters.values { waiter.resume(throwing: SyncClientError.closed(closeReason)) }
        pongWaiters = [:]
        credentialStream.continuation.finish()
        actionStream.continuation.finish()
        ended.fire()
    }

    private func perform(_ actions: [ClientConnectionStateMachine.Action]) async throws {
        for action in actions {
            switch action {
            case .send(let message):
                try await send(message)
            case .deliver(let id, let event):
                deliver(id, event)
            case .refuse(_, let refusal):
                throw SyncClientError.refused(refusal)
            case .connected(let welcome):
                self.welcome = welcome
                logger.debug("connected", metadata: ["server": "\(welcome.software)"])
            case .pong(let nonce):
                if let waiter = pongWaiters.removeValue(forKey: nonce) { waiter.resume() } else { receivedPongs.insert(nonce) }
            case .credential(let credential):
                credentialStream.continuation.yield(credential)
            case .action(let action):
                actionStream.continuation.yield(action)
            case .close(let error):
                closeReason = error
                if let error, error == protocolViolation, error.code != .wrongProtocolVersion {
                    // Logged once here, at the edge: the agent only sees its sessions disconnected.
                    logger.error(
                        "the sync server broke the protocol: error \(error.code.rawValue) (\(error.code.name)): \(error.message); the connection is closed and retried with backoff",
                        metadata: ["tether.error_code": "\(error.code.rawValue)"])
                } else if let error {
                    logger.notice("sync connection closing", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
                }
                await close()
            }
        }
    }

    private func deliver(_ id: SessionID, _ event: SessionEvent) {
        guard let continuation = sessions[id] else { return }
        continuation.yield(event)
        switch event {
        case .unbound, .disconnected:
            continuation.finish()
            sessions[id] = nil
        default:
            break
        }
    }

    private func send(_ message: ClientMessage) async throws {
        do {
            try await writer.writeBinaryMessage(ByteBuffer(bytes: message.encoded()))
        } catch {
            throw SyncClientError.closed(closeReason)
        }
    }
}
