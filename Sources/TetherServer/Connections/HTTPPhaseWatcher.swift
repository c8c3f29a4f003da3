import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Sits after HTTP decoding and tells the connection's ``ConnectionGuard`` when a request
/// head arrived whole (and whether it is an admin request with the admin token) and when its
/// answer was written.
final class HTTPPhaseWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let adminGate: AdminTokenGate?

    init(adminGate: AdminTokenGate?) {
        self.adminGate = adminGate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data) {
            let admin = request.path.map { $0 == "/admin" || $0.hasPrefix("/admin/") } ?? false
            let withToken = admin && (adminGate?.accepts(authorization: request.headerFields[.authorization]) ?? false)
            context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: withToken))
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd: Bool = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd { context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.responseEnd) }
    }
}
