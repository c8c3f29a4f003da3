import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Sits after HTTP decoding and tells the connection's ``ConnectionGuard`` when a request
/// head arrived whole (and whether it is an admin request with the admin token, or a console
/// request of a signed-in session) and when its
/// answer was written.
final class HTTPPhaseWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let adminGate: AdminTokenGate?
    private let console: ConsoleSessions?

    init(adminGate: AdminTokenGate?, console: ConsoleSessions? = nil) {
        self.adminGate = adminGate
        self.console = console
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data) {
            let admin = request.path.map { $0 == "/admin" || $0.hasPrefix("/admin/") } ?? false
            let consolePage = request.path.map { $0 == "/console" || $0.hasPrefix("/console/") } ?? false
            // A console request of a signed-in session is an admin's, as one with the token is.
            let withToken = admin && (adminGate?.accepts(authorization: request.headerFields[.authorization]) ?? false)
                || consolePage && (console?.isSignedIn(cookieHeader: request.headerFields[.cookie]) ?? false)
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
