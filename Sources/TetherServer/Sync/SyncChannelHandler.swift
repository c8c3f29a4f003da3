import Logging
import NIOCore
import NIOWebSocket
import TetherProtocol

/// One `/sync` WebSocket connection on its event loop, with no task while it is idle (issue 50):
/// answers pings, sends its own every ``SyncSocketConfiguration/pingPeriod`` from a timer,
/// runs the close handshake (``SyncSocketStateMachine``), joins data frames into messages
/// (``MessageAssembler``) and hands them to the ``SyncEndpoint`` one at a time, each in a job of
/// the ``SyncWorkQueue``. While a message's work runs, the channel reads nothing more (reads are
/// held): a device's messages are worked on in order and none piles up in memory.
///
/// Installed by ``SyncListenerChannel`` after NIO's WebSocket upgrade (frame decoder and encoder,
/// protocol error handler). Writes from the connection's senders (``SyncChannelWriter``) pass
/// through here and are refused once the close frame is sent.
final class SyncChannelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let endpoint: SyncEndpoint
    private let configuration: SyncSocketConfiguration
    private let logger: Logger
    private var socket = SyncSocketStateMachine()
    private var assembler = MessageAssembler()
    private var connection: ServerConnection?
    /// Kept from `handlerAdded` to `handlerRemoved`, for the work that comes back from the queue.
    private var context: ChannelHandlerContext?
    private var gate = ConnectionGate.none
    /// Complete messages not yet handed over (one read can hold several).
    private var inputs = CircularBuffer<SyncEndpoint.Input>()
    /// A job of this connection is running (its opening or a message's work).
    private var working = false
    /// A read was asked for while working: issued when the work is done.
    private var readHeld = false
    /// The connection's messages are over (closed by its machine, the peer or the network).
    private var ending = false
    private var closeSubmitted = false
    private var pingTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?

    init(endpoint: SyncEndpoint, configuration: SyncSocketConfiguration, logger: Logger) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let connection = endpoint.connection(on: context.channel, logger: logger)
        self.connection = connection
        let channel = context.channel
        gate = ConnectionGate { event in channel.pipeline.fireUserInboundEventTriggered(event) }
        gate.upgraded()
        let endpoint = self.endpoint
        submit(context) {
            await endpoint.opened(connection)
            return SyncEndpoint.Outcome()
        }
        schedulePing(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimers()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        socket.channelClosed()
        stopTimers()
        endMessages()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            switch socket.receivedClose(Array(frame.unmaskedData.readableBytesView)) {
            case .replyAndClose(let code):
                writeClose(context, code: code).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            case .close:
                context.close(promise: nil)
            case .none:
                break
            }
            endMessages()
        case .ping:
            if socket.answersPing() {
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
            }
        case .pong:
            socket.receivedPong(Array(frame.unmaskedData.readableBytesView))
        case .binary, .text, .continuation:
            guard socket.isOpen, !ending else { return }  // after our close frame: dropped
            guard frame.reservedBits.isEmpty else { return fail(context, code: SyncSocketStateMachine.protocolError) }
            endpoint.service.metrics.received(bytes: frame.length)
            let kind: MessageAssembler.FrameKind =
                switch frame.opcode {
                case .text: .text
                case .continuation: .continuation
                default: .binary
                }
            switch assembler.append(kind, frame.unmaskedData.readableBytesView, fin: frame.fin) {
            case .incomplete: return
            case .failure(let error): inputs.append(.undecodable(error))
            case .message(let bytes): inputs.append(.message(bytes))
            }
            startNext(context)
        default:
            fail(context, code: SyncSocketStateMachine.protocolError)  // a reserved opcode
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent {
            // The device's end is gone (the listener allows half-closure for HTTP): nothing more
            // can arrive, so the connection ends here.
            context.close(promise: nil)
        } else if event is ChannelShouldQuiesceEvent {
            // The server shuts down: the device reconnects elsewhere or later.
            close(context, code: SyncSocketStateMachine.goingAway)
            endMessages()
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("sync connection failed", metadata: ["connection": "\(connection?.id ?? 0)", "error": "\(error)"])
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if working || !inputs.isEmpty {
            readHeld = true
        } else {
            context.read()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard socket.isOpen else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        context.write(data, promise: promise)
    }
}

extension SyncChannelHandler {
    /// Hands the next complete message over when no work runs; asks for more bytes when none waits.
    private func startNext(_ context: ChannelHandlerContext) {
        guard !working, !ending, let connection else { return }
        guard let input = inputs.popFirst() else {
            if readHeld {
                readHeld = false
                context.read()
            }
            return
        }
        let (endpoint, gate) = (self.endpoint, self.gate)
        submit(context) { await endpoint.process(input, connection: connection, gate: gate) }
    }

    /// A message's work is done: its streamers start, and the next message is handed over (or
    /// the connection closes, when the work said so).
    private func processed(_ outcome: SyncEndpoint.Outcome) {
        working = false
        for streamer in outcome.streamers { streamer.start() }
        if outcome.close {
            if let context { close(context, code: SyncSocketStateMachine.normalClosure) }
            endMessages()
        } else if ending {
            closeConnectionIfIdle()
        } else if let context {
            startNext(context)
        }
    }

    /// Runs `job` as this connection's work (its opening, a message's): nothing else of it runs
    /// meanwhile; its outcome comes back to the event loop.
    private func submit(_ context: ChannelHandlerContext, _ job: @escaping @Sendable () async -> SyncEndpoint.Outcome) {
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        working = true
        endpoint.queue.submit {
            let outcome = await job()
            loop.execute { handler.value.processed(outcome) }
        }
    }

    /// No message is handed over any more: the connection's close job runs once its work ends.
    private func endMessages() {
        ending = true
        inputs.removeAll()
        closeConnectionIfIdle()
    }

    private func closeConnectionIfIdle() {
        guard !working, !closeSubmitted, let connection else { return }
        closeSubmitted = true
        let endpoint = self.endpoint
        endpoint.queue.submit { await endpoint.closed(connection) }
    }

    /// Starts the close handshake: our close frame, then the channel closes when the peer
    /// answers or after ``SyncSocketConfiguration/closeTimeout``.
    private func close(_ context: ChannelHandlerContext, code: UInt16) {
        guard socket.close() else { return }
        writeClose(context, code: code).assumeIsolated().whenFailure { _ in context.close(promise: nil) }
        closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: configuration.closeTimeout) {
            context.close(promise: nil)
        }
    }

    /// A protocol error in the frames: close with `code` and read nothing more.
    private func fail(_ context: ChannelHandlerContext, code: UInt16) {
        close(context, code: code)
        endMessages()
    }

    private func writeClose(_ context: ChannelHandlerContext, code: UInt16) -> EventLoopFuture<Void> {
        var body = context.channel.allocator.buffer(capacity: 2)
        body.writeInteger(code)
        return context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: body)))
    }

    private func schedulePing(_ context: ChannelHandlerContext) {
        guard let period = configuration.pingPeriod else { return }
        pingTimer = context.eventLoop.assumeIsolated().scheduleTask(in: period) { [self] in
            let payload = (0..<8).map { _ in UInt8.random(in: .min ... .max) }
            switch socket.pingDue(payload: payload) {
            case .sendPing(let payload):
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(bytes: payload))),
                    promise: nil)
                schedulePing(context)
            case .timedOut:
                logger.debug("sync connection closed: no pong", metadata: ["connection": "\(connection?.id ?? 0)"])
                close(context, code: SyncSocketStateMachine.goingAway)
                endMessages()
                context.close(promise: nil)
            case .stop:
                break
            }
        }
    }

    private func stopTimers() {
        pingTimer?.cancel()
        closeTimer?.cancel()
        pingTimer = nil
        closeTimer = nil
    }
}

/// How a `/sync` WebSocket behaves (``SyncChannelHandler``).
struct SyncSocketConfiguration: Sendable {
    /// Largest frame accepted (NIO's decoder refuses a larger one with 1009).
    var maxFrameSize = ProtocolLimits.maxFrameBytes
    /// The server pings this often and closes a connection whose last ping went unanswered for
    /// a whole period; nil: no pings (the agent pings on its own too).
    var pingPeriod: TimeAmount? = .seconds(30)
    /// How long our close frame waits for the peer's before the channel closes anyway.
    var closeTimeout: TimeAmount = .seconds(15)
}
