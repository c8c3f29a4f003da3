import Logging
import NIOCore
import TetherProtocol
import WSCore

/// One WebSocket connection on the server: drives its ``ServerConnectionStateMachine``,
/// writes what the machine says to send, and keeps the bound sessions' contexts. The
/// connection's reader task calls ``received(_:)``; the hub pushes failures through
/// ``fail(_:generation:with:)``; session streamers ask ``isCurrent(_:generation:)``.
actor ServerConnection {
    struct Bound {
        var session: BoundSession
        var generation: UInt64
    }

    /// Work the reader runs after a machine step (it owns the task group for streamers).
    enum Work: Sendable {
        case bind(BindRequest)
        case integrate(Upload, BoundSession)
        case stream(SessionStreamer)
        case close
    }

    let id: UInt64
    let service: SyncService
    let writer: WebSocketOutboundWriter
    let logger: Logger
    private var machine: ServerConnectionStateMachine
    private var bound: [SessionID: Bound] = [:]
    private var pending: [SessionID: (AsyncStream<Void>, ServerVersion)] = [:]
    /// Each bound session's flow control (protocol 2).
    private var windows: [SessionID: SendWindow] = [:]
    private var nextGeneration: UInt64 = 1

    init(id: UInt64, service: SyncService, writer: WebSocketOutboundWriter, logger: Logger) {
        self.id = id
        self.service = service
        self.writer = writer
        self.logger = logger
        self.machine = ServerConnectionStateMachine(software: "tether-server \(TetherVersion.release)")
    }

    var isClosed: Bool { machine.state == .closed }

    func received(_ message: ClientMessage) async -> [Work] {
        await perform(machine.received(message))
    }

    func decodeFailed(_ error: WireDecodeError) async -> [Work] {
        await perform(machine.decodeFailed(error))
    }

    /// The bind verdict computed by the reader.
    func bindDecided(_ session: SessionID, _ outcome: SyncService.BindOutcome) async -> [Work] {
        switch outcome {
        case .accepted(let reply, let after, let boundSession, let wakeups):
            bound[session] = Bound(session: boundSession, generation: nextGeneration)
            nextGeneration += 1
            windows.removeValue(forKey: session)?.close()
            let flowControl = (machine.negotiatedProtocolVersion ?? 0) >= TetherVersion.flowControl
            windows[session] = SendWindow(initial: flowControl ? ProtocolLimits.initialSendWindow : nil)
            pending[session] = (wakeups, after)
            let work = await perform(machine.sessionEvent(session, .bindAccepted(reply, downloadAfter: after)))
            pending[session] = nil
            return work
        case .rejected(let error):
            // Refusals an operator caused on purpose (sync terminated) are routine; the rest are notable.
            logger.log(level: error.code == .otherSessionError ? .info : .notice, "bind refused", metadata: [
                "session": "\(session)", "code": "\(error.code.rawValue)", "reason": "\(error.message)",
            ])
            return await perform(machine.sessionEvent(session, .bindRejected(error)))
        }
    }

    /// Ends a session with a session-level error (grant revoked, upload refused, …).
    /// `generation` guards against a session id that was unbound and bound again meanwhile.
    func fail(_ session: SessionID, generation: UInt64?, with error: SyncError) async {
        if let generation, bound[session]?.generation != generation { return }
        guard machine.sessionState(session) != nil else { return }
        logger.log(level: error.code == .otherSessionError ? .info : .notice, "session failed", metadata: [
            "session": "\(session)", "partition": "\(bound[session]?.session.partition.rawValue ?? "-")",
            "code": "\(error.code.rawValue)", "reason": "\(error.message)",
        ])
        _ = await perform(machine.sessionEvent(session, .failed(error)))
    }

    /// Called by a streamer before each state chunk; false when it must stop.
    func sendingStateChunk(_ session: SessionID, generation: UInt64, isLast: Bool) async -> Bool {
        guard bound[session]?.generation == generation else { return false }
        _ = await perform(machine.sessionEvent(session, .sendingStateChunk(isLast: isLast)))
        return bound[session]?.generation == generation
    }

    func isCurrent(_ session: SessionID, generation: UInt64) -> Bool {
        bound[session]?.generation == generation && machine.state != .closed
    }

    func connectionClosed() async {
        _ = await perform(machine.connectionClosed())
    }

    func generation(of session: SessionID) -> UInt64? { bound[session]?.generation }

    /// Executes machine actions: sends in order, releases sessions, and returns the work
    /// that needs the reader (binds, uploads, streamers, closing).
    private func perform(_ actions: [ServerConnectionStateMachine.Action]) async -> [Work] {
        var work: [Work] = []
        for action in actions {
            switch action {
            case .send(let message):
                await send(message)
            case .close:
                work.append(.close)
            case .session(let id, let sessionAction):
                switch sessionAction {
                case .authorizeBind(let request):
                    work.append(.bind(request))
                case .integrate(let upload):
                    if let session = bound[id]?.session { work.append(.integrate(upload, session)) }
                case .grantCredit(let messages):
                    windows[id]?.grant(messages)
                case .streamState, .streamDownloads:
                    guard let entry = bound[id], let (wakeups, after) = pending[id], let window = windows[id] else { continue }
                    let bootstrap: Bool = if case .streamState = sessionAction { true } else { false }
                    work.append(.stream(SessionStreamer(
                        session: entry.session, generation: entry.generation, bootstrap: bootstrap, after: after,
                        wakeups: wakeups, window: window, connection: self, storage: service.storage, policy: service.policy,
                        writer: writer, logger: logger)))
                case .release:
                    windows.removeValue(forKey: id)?.close()
                    if let entry = bound.removeValue(forKey: id) {
                        await service.release(entry.session.key)
                    } else {
                        await service.release(SessionKey(connection: self.id, session: id))
                    }
                case .forget, .send, .closeConnection:
                    break  // the connection machine turns these into sends and closes
                }
            }
        }
        return work
    }

    func send(_ message: ServerMessage) async {
        if case .error(let error) = message { service.metrics.syncError(error.error.code) }
        if case .error(let error) = message, error.session == nil {
            logger.notice("closing connection with a protocol error", metadata: [
                "code": "\(error.error.code.rawValue)", "reason": "\(error.error.message)",
            ])
        }
        do {
            let bytes = message.encoded()
            try await writer.writeBinaryMessage(ByteBuffer(bytes: bytes))
            service.metrics.sent(bytes: bytes.count)
        } catch {
            logger.debug("write failed", metadata: ["message": "\(message.name)", "error": "\(error)"])
        }
    }
}
