import HTTPTypes
import NIOCore
import NIOHTTP1

/// Sits right after the HTTP decoder of a connection from a trusted proxy, for its first
/// request head only: a WebSocket upgrade's head never reaches ``HTTPPhaseWatcher`` (added
/// only once a connection is known not to upgrade), so its `X-Forwarded-For` is read here and
/// handed to the ``ConnectionGuard``. It removes itself after that head, before any WebSocket
/// byte could reach it.
final class UpgradeHeadReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let values = head.headers[HTTPPhaseWatcher.forwardedFor.rawName]
            if !values.isEmpty {
                context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.forwardedFor(values.joined(separator: ",")))
            }
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
