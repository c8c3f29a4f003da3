import NIOCore

/// Sits right after the ``ConnectionGuard`` of a connection from a trusted proxy when
/// `proxy_protocol = true`: reads the PROXY v2 header (``ProxyHeader``), tells the guard the
/// client it names, hands on what follows (TLS or HTTP) and removes itself. Bytes that are not
/// a header close the connection. The guard's header timeout and byte limits hold meanwhile.
final class ProxyHeaderReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var buffered: ByteBuffer?
    private var done = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else {
            context.fireChannelRead(data)
            return
        }
        var incoming = unwrapInboundIn(data)
        if buffered == nil {
            buffered = incoming
        } else {
            buffered!.writeBuffer(&incoming)
        }
        guard var bytes = buffered else { return }
        switch ProxyHeader.parse(Array(bytes.readableBytesView.prefix(16 + ProxyHeader.maxPayload))) {
        case .needMore:
            return
        case .invalid(let reason):
            done = true
            buffered = nil
            context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.badProxyHeader("not a PROXY protocol v2 header: \(reason)"))
        case .header(let source, let length):
            done = true
            buffered = nil
            context.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.proxyClient(source))
            bytes.moveReaderIndex(forwardBy: length)
            if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
