import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Sits after HTTP decoding and tells the connection's ``ConnectionGuard`` when a request
/// head arrived whole (whether it is an admin request with the admin token, or a console
/// request of a signed-in session, and what its `X-Forwarded-For` says) and when its answer
/// was written. It also bounds the body of a request that is neither: a declared
/// `Content-Length` over `[limits] unauthenticated_body_bytes` is answered 413 at once (the
/// body is never read, the connection closed); a chunked body is cut where it passes it. No
/// route ever reads such a body.
final class HTTPPhaseWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let adminGate: AdminTokenGate?
    private let console: ConsoleSessions?
    private let admission: ConnectionAdmission?
    /// Body bytes of the current request so far and the most it may carry; nil when unbounded.
    private var body: (count: Int, limit: Int)?
    /// Refused: nothing more is handed on.
    private var refused = false

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    init(adminGate: AdminTokenGate?, console: ConsoleSessions? = nil, admission: ConnectionAdmission? = nil) {
        self.adminGate = adminGate
        self.console = console
        self.admission = admission
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        switch unwrapInboundIn(data) {
        case .head(let request):
            let admin = request.path.map { $0 == "/admin" || $0.hasPrefix("/admin/") } ?? false
            let consolePage = request.path.map { $0 == "/console" || $0.hasPrefix("/console/") } ?? false
            // A console request of a signed-in session is an admin's, as one with the token is.
            let withToken = admin && (adminGate?.accepts(authorization: request.headerFields[.authorization]) ?? false)
                || consolePage && (console?.isSignedIn(cookieHeader: request.headerFields[.cookie]) ?? false)
            let forwarded = request.headerFields[values: Self.forwardedFor]
            context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(
                authenticated: withToken, forwardedFor: forwarded.isEmpty ? nil : forwarded.joined(separator: ",")))
            body = nil
            if !withToken, let limit = admission?.limits.unauthenticatedBodyBytes {
                if let declared = request.headerFields[.contentLength].flatMap(Int.init), declared > limit {
                    refuse(context, answer: true)
                    return
                }
                body = (0, limit)
            }
        case .body(let buffer):
            if let bounded = body {
                let count = bounded.count + buffer.readableBytes
                body = (count, bounded.limit)
                if count > bounded.limit {
                    refuse(context, answer: false)
                    return
                }
            }
        case .end:
            body = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd: Bool = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd { context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.responseEnd) }
    }

    /// Answers 413 when the request was not handed on (`answer`), then has the guard close the
    /// connection by `unauthenticated_body_bytes`.
    private func refuse(_ context: ChannelHandlerContext, answer: Bool) {
        refused = true
        body = nil
        if answer {
            let head = HTTPResponse(status: .contentTooLarge, headerFields: [.connection: "close", .contentLength: "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.limited(.unauthenticatedBodyBytes))
    }
}
