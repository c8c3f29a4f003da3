import NIOCore

/// What the layers above tell a connection's ``ConnectionGuard`` (fired from the pipeline's
/// head, so the guard sees them first and keeps them).
enum ConnectionGuardEvent: Sendable {
    /// An HTTP request head arrived whole; `authenticated` when it carried the admin token.
    case requestHead(authenticated: Bool)
    /// The answer to an HTTP request was written.
    case responseEnd
    /// The connection is a WebSocket now.
    case upgraded
    /// A bind's token named a user: the connection is no longer limited.
    case authenticated
}

/// The first handler of every connection (before TLS and HTTP): it enforces `[limits]` on
/// what a connection may cost before it authenticates. It counts the bytes read until then
/// (per connection and, through ``ConnectionAdmission``, for all), gives them back once the
/// connection authenticates or an HTTP request is answered, and closes a connection whose
/// request head, next request, or first authenticated bind after the upgrade does not come in
/// time. Everything runs on the connection's event loop.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum Phase {
        /// HTTP: a request head is due (header timeout).
        case awaitingHead
        /// HTTP: a request is being answered.
        case request
        /// HTTP: between requests (idle timeout).
        case idle
        /// Upgraded (auth timeout until authenticated).
        case webSocket
        case closed
    }

    private let admission: ConnectionAdmission
    private var phase = Phase.awaitingHead
    private var started = false
    /// Counted in ``ConnectionAdmission`` for its peer until ``finish()``.
    private var admitted = true
    private var authenticated = false
    /// Unauthenticated bytes this connection holds in ``ConnectionAdmission``.
    private var held = 0
    private var timer: Scheduled<Void>?
    private let peer: String

    /// Small reads until authenticated: an unauthenticated connection's bytes sit in buffers
    /// sized to what it sent, not in 64 KiB ones.
    static let unauthenticatedReads = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 4096)
    /// NIO's default.
    static let authenticatedReads = AdaptiveRecvByteBufferAllocator()

    /// For a connection from `peer` that `admission` admitted already.
    init(admission: ConnectionAdmission, peer: String) {
        self.admission = admission
        self.peer = peer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard phase != .closed else { return }
        if !authenticated {
            let count = unwrapInboundIn(data).readableBytes
            if let limit = admission.hold(count, held: held) {
                close(context, by: limit)
                return
            }
            held += count
        }
        if phase == .idle {
            phase = .awaitingHead
            arm(context, .headerTimeout)
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ConnectionGuardEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard phase != .closed else { return }
        switch event {
        case .requestHead(let withToken):
            phase = .request
            disarm()
            if withToken { authenticate(context) }
        case .responseEnd:
            if phase == .request {
                phase = .idle
                arm(context, .idleTimeout)
            }
            if !authenticated {
                admission.release(held)
                held = 0
            }
        case .upgraded:
            phase = .webSocket
            if authenticated { disarm() } else { arm(context, .authTimeout) }
        case .authenticated:
            authenticate(context)
            if phase == .webSocket { disarm() }
        }
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        // Read sizing only: a channel that refuses it reads with the default allocator.
        try? context.channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.unauthenticatedReads)
        arm(context, .headerTimeout)
    }

    private func authenticate(_ context: ChannelHandlerContext) {
        if !authenticated { try? context.channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.authenticatedReads) }
        authenticated = true
        admission.release(held)
        held = 0
    }

    private func close(_ context: ChannelHandlerContext, by limit: ConnectionLimit) {
        admission.closed(peer, by: limit)
        finish()
        context.close(promise: nil)
    }

    /// Gives back everything the connection held; idempotent.
    private func finish() {
        phase = .closed
        disarm()
        admission.release(held)
        held = 0
        if admitted {
            admitted = false
            admission.leave(peer: peer)
        }
    }

    private func arm(_ context: ChannelHandlerContext, _ limit: ConnectionLimit) {
        disarm()
        let limits = admission.limits
        let after: Duration =
            switch limit {
            case .headerTimeout: limits.headerTimeout
            case .idleTimeout: limits.idleTimeout
            default: limits.authTimeout
            }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(after)) { [self] in
            timer = nil
            guard phase != .closed else { return }
            close(context, by: limit)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}
