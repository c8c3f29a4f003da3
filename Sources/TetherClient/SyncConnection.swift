import Logging
import NIOCore
import NIOWebSocket
public import TetherProtocol
import WSClient

/// A client connection to a tether-server, carrying several partitions' sessions
/// (multiplexed by session id). Driven by ``ClientConnectionStateMachine``; open one with
/// ``run(_:logger:_:)``.
public actor SyncConnection {
    let writer: WebSocketOutboundWriter
    let logger: Logger
    private var machine = ClientConnectionStateMachine()
    private var sessions: [SessionID: AsyncStream<SessionEvent>.Continuation] = [:]
    private var pongWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    private var receivedPongs: Set<UInt64> = []
    private var nextNonce: UInt64 = 1
    /// The server's welcome, once received.
    public private(set) var welcome: Welcome?
    /// Why the connection closed, once it has.
    public private(set) var closeReason: SyncError?
    private var closing = false

    init(writer: WebSocketOutboundWriter, logger: Logger) {
        self.writer = writer
        self.logger = logger
    }

    /// Binds a partition on session `request.session`; read the outcome from the session's events.
    public func bind(_ request: BindRequest) async throws -> SyncSession {
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
        return SyncSession(id: request.session, partition: request.partition, events: stream, connection: self)
    }

    /// Sends a protocol ping and waits for the pong (or the end of the connection).
    public func ping() async throws {
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

    public var isClosed: Bool { machine.state == .closed }

    func request(_ session: SessionID, _ event: ClientSessionStateMachine.Event) async throws {
        try await perform(machine.request(session, event))
    }

    func sendHello(software: String) async throws {
        try await send(ClientConnectionStateMachine.hello(software: software))
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
                switch assembler.append(kind, frame.data.readableBytesView, fin: frame.fin) {
                case .incomplete:
                    continue
                case .failure(let error):
                    try? await perform(machine.decodeFailed(error))
                case .message(let bytes):
                    switch Result(catching: { () throws(WireDecodeError) in try ServerMessage.decode(bytes) }) {
                    case .success(let message): try? await perform(machine.received(message))
                    case .failure(let error): try? await perform(machine.decodeFailed(error))
                    }
                }
                if machine.state == .closed { break reading }
            }
        } catch {
            logger.debug("sync connection read failed", metadata: ["error": "\(error)"])
        }
        connectionEnded()
    }

    /// Closes the WebSocket (normal closure); sessions get `disconnected`.
    public func close() async {
        guard !closing else { return }
        closing = true
        try? await writer.close(.normalClosure, reason: nil)
    }

    func connectionEnded() {
        for action in machine.connectionLost() {
            if case .deliver(let id, let event) = action { deliver(id, event) }
        }
        for continuation in sessions.values { continuation.finish() }
        sessions = [:]
        for waiter in pongWaiters.values { waiter.resume(throwing: SyncClientError.closed(closeReason)) }
        pongWaiters = [:]
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
            case .close(let error):
                closeReason = error
                if let error { logger.notice("sync connection closing", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"]) }
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
