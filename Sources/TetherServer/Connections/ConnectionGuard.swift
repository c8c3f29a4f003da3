import Logging
import NIOCore

/// What the layers above tell a connection's ``ConnectionGuard`` (fired from the pipeline's
/// head, so the guard sees them first and keeps them).
enum ConnectionGuardEvent: Sendable {
    /// An HTTP request head arrived whole; `authenticated` when it carried the admin token (or
    /// a signed-in console session); `forwardedFor`: its `X-Forwarded-For` fields, joined.
    case requestHead(authenticated: Bool, forwardedFor: String? = nil)
    /// The answer to an HTTP request was written.
    case responseEnd
    /// The connection is a WebSocket now.
    case upgraded
    /// A bind's token named a user: the connection is no longer limited.
    case authenticated
    /// A WebSocket upgrade's `X-Forwarded-For` fields, joined (``UpgradeHeadReader``).
    case forwardedFor(String)
    /// A trusted proxy's PROXY header named the client (nil: its own connection).
    case proxyClient(IPAddress?)
    /// What should have been a PROXY header was not (the connection is closed).
    case badProxyHeader(String)
    /// Close the connection by this limit (e.g. a body over `unauthenticated_body_bytes`).
    case limited(ConnectionLimit)
    /// ``ConnectionAdmission`` evicted the connection to make room in the total.
    case evicted
}

/// The first handler of every connection (before TLS and HTTP): it enforces `[limits]` on
/// what a connection may cost before it authenticates. It counts the bytes read until then
/// (through ``ConnectionAdmission``, for its peer group and for all), gives them back once the
/// connection authenticates or an HTTP request is answered, and closes a connection whose
/// request head, unauthenticated request, next request, or first authenticated bind after the
/// upgrade does not come in time. Behind a trusted proxy it counts the connection for the
/// client the proxy names. Everything runs on the connection's event loop.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum Phase {
        /// HTTP: a request head is due (header timeout).
        case awaitingHead
        /// HTTP: a request is being answered (request timeout, unless authenticated).
        case request
        /// HTTP: between requests (idle timeout).
        case idle
        /// Upgraded (auth timeout until authenticated).
        case webSocket
        case closed
    }

    private let admission: ConnectionAdmission
    private let id: ConnectionID
    private var phase = Phase.awaitingHead
    private var started = false
    /// Counted in ``ConnectionAdmission`` until ``finish()``.
    private var admitted = true
    private var authenticated = false
    private var timer: Scheduled<Void>?
    /// The client, for log lines: the socket's peer, or the client a trusted proxy named.
    private var peer: String
    /// The address whose `X-Forwarded-For` is read: a trusted proxy's (nil: none is read).
    private var proxy: IPAddress?
    /// The client a trusted proxy named last.
    private var client: IPAddress?
    /// The channel, by which ``ConnectionAdmission`` knows the client a proxy named.
    private var channel: ObjectIdentifier?

    /// Small reads until authenticated: an unauthenticated connection's bytes sit in buffers
    /// sized to what it sent, not in 64 KiB ones.
    static let unauthenticatedReads = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 4096)
    /// NIO's default.
    static let authenticatedReads = AdaptiveRecvByteBufferAllocator()

    /// For connection `id` that `admission` admitted already, from `peer`; `proxy` when that
    /// is a trusted proxy.
    init(admission: ConnectionAdmission, id: ConnectionID, peer: String, proxy: IPAddress? = nil) {
        self.admission = admission
        self.id = id
        self.peer = peer
        self.proxy = proxy
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
        if !authenticated, let limit = admission.hold(unwrapInboundIn(data).readableBytes, by: id) {
            close(context, by: limit)
            return
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
        case .requestHead(let withToken, let forwardedFor):
            phase = .request
            if let proxy, let forwardedFor,
                let named = ForwardedFor.client(forwardedFor, peer: proxy, trusted: admission.limits.trustedProxies)
            {
                guard attribute(context, to: named) else { return }
            }
            if withToken {
                disarm()
                authenticate(context)
            } else if !authenticated {
                arm(context, .requestTimeout)
            } else {
                disarm()
            }
        case .responseEnd:
            if phase == .request {
                phase = .idle
                arm(context, .idleTimeout)
            }
            if !authenticated { admission.release(id) }
        case .upgraded:
            phase = .webSocket
            if authenticated { disarm() } else { arm(context, .authTimeout) }
        case .authenticated:
            authenticate(context)
            if phase == .webSocket { disarm() }
        case .forwardedFor(let forwardedFor):
            if let proxy, let named = ForwardedFor.client(forwardedFor, peer: proxy, trusted: admission.limits.trustedProxies) {
                _ = attribute(context, to: named)
            }
        case .proxyClient(let named):
            guard let named else { return }  // LOCAL: the proxy's own connection
            // A client that is itself a trusted proxy names the next one in X-Forwarded-For.
            let trusted = admission.limits.trustedProxies.holds(named)
            proxy = trusted ? named : nil
            if !trusted { _ = attribute(context, to: named) } else { peer = named.description }
        case .badProxyHeader(let reason):
            admission.logger.info("connection from \(peer) closed: \(reason)", metadata: ["peer": "\(peer)"])
            finish()
            context.close(promise: nil)
        case .limited(let limit):
            close(context, by: limit)
        case .evicted:
            close(context, by: .unauthenticatedBytesTotal)
        }
    }

    /// Counts the connection for `named`'s group from now on; false when that closed it.
    private func attribute(_ context: ChannelHandlerContext, to named: IPAddress) -> Bool {
        guard named != client else { return true }
        client = named
        peer = named.description
        let channel = ObjectIdentifier(context.channel)
        self.channel = channel
        admission.name(channel, client: peer)
        let group = PeerGroup(named, ipv6PrefixLength: admission.limits.ipv6PrefixLength)
        if let limit = admission.move(id, to: group) {
            close(context, by: limit)
            return false
        }
        return true
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        // Read sizing only: a channel that refuses it reads with the default allocator.
        try? context.channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.unauthenticatedReads)
        arm(context, .headerTimeout)
    }

    private func authenticate(_ context: ChannelHandlerContext) {
        // Read sizing only, as in start(_:).
        if !authenticated { try? context.channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.authenticatedReads) }
        authenticated = true
        admission.release(id)
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
        if admitted {
            admitted = false
            admission.leave(id)
        }
        if let channel {
            self.channel = nil
            admission.name(channel, client: nil)
        }
    }

    private func arm(_ context: ChannelHandlerContext, _ limit: ConnectionLimit) {
        disarm()
        let limits = admission.limits
        let after: Duration =
            switch limit {
            case .headerTimeout: limits.headerTimeout
            case .idleTimeout: limits.idleTimeout
            case .requestTimeout: limits.requestTimeout
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
