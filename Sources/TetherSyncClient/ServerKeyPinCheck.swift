import NIOCore
import NIOSSL
import NIOTLS

/// Checks the server's public key against the pinned ones when the TLS handshake completes,
/// after NIOSSL verified the chain and the host name (a custom verification callback would
/// replace that verification, not add to it). It sits right behind the TLS handler, so it sees
/// the handshake's end before any byte the server sends: on a mismatch nothing is passed on,
/// ``verdict`` fails with ``SyncClientError/serverKeyNotPinned(_:)`` and the channel closes.
final class ServerKeyPinCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny

    private let pins: [ServerKeyPin]
    private let host: String
    private let promise: EventLoopPromise<Void>
    private var refused = false

    /// Succeeds when the key is pinned, fails when it is not or the channel closes first.
    var verdict: EventLoopFuture<Void> { promise.futureResult }

    init(pins: [ServerKeyPin], host: String, eventLoop: any EventLoop) {
        self.pins = pins
        self.host = host
        promise = eventLoop.makePromise()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let tls = event as? TLSUserEvent, case .handshakeCompleted = tls else {
            if !refused { context.fireUserInboundEventTriggered(event) }
            return
        }
        let seen: ServerKeyPin
        do {
            guard let certificate = try context.pipeline.syncOperations.nioSSL_peerCertificate() else {
                throw NIOSSLError.noCertificateToValidate
            }
            seen = try ServerKeyPin(of: certificate)
        } catch {
            refuse(context, SyncClientError.tlsFailure("cannot read the server's public key to check pin_sha256: \(error)"))
            return
        }
        guard pins.contains(seen) else {
            refuse(context, SyncClientError.serverKeyNotPinned(ServerKeyPinMismatch(host: host, seen: seen, expected: pins)))
            return
        }
        promise.succeed()
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
    }

    private func refuse(_ context: ChannelHandlerContext, _ error: SyncClientError) {
        refused = true
        promise.fail(error)
        context.close(promise: nil)
    }
}
