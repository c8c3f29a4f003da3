import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// A child channel that puts a ``ConnectionGuard`` in front of everything `base` sets up
/// (TLS included), so `[limits]` hold from a connection's first byte.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let admission: ConnectionAdmission

    /// Refuses a connection past `connections_per_peer` before anything is set up on it: it is
    /// closed here (NIO leaves a connection whose setup failed open) and never reaches
    /// Hummingbird. A connection from a trusted proxy is counted on its own until the proxy
    /// names the client (a PROXY header read first with `proxy_protocol`, or X-Forwarded-For).
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admission = self.admission
        let address = channel.remoteAddress?.ipAddress.flatMap { IPAddress($0) }
        let peer = address?.description ?? "unknown"
        let (group, trusted) = admission.group(of: address)
        guard let id = admission.admit(group) else {
            admission.closed(peer, by: .connectionsPerPeer)
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ConnectionRefused())
        }
        // Eviction (to make room in the total) closes the connection through its guard.
        admission.register(id) { [channel] in channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.evicted) }
        let readsProxyHeader = trusted && admission.limits.proxyProtocol
        return channel.eventLoop.makeCompletedFuture {
            let handler = ConnectionGuard(admission: admission, id: id, peer: peer, proxy: trusted ? address : nil)
            try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            if readsProxyHeader { try channel.pipeline.syncOperations.addHandler(ProxyHeaderReader(), position: .after(handler)) }
        }.flatMapError { error in
            admission.leave(id)
            return channel.eventLoop.makeFailedFuture(error)
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            // A WebSocket upgrade's head passes only the decoder and the upgrade handler. Without
            // the decoder (a channel closed meanwhile) there is no head to read.
            if trusted, let decoder = try? channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) {
                try channel.pipeline.syncOperations.addHandler(UpgradeHeadReader(), position: .after(decoder))
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// A connection refused by `[limits] connections_per_peer`.
struct ConnectionRefused: Error {}

extension HTTPServerBuilder {
    /// The `metrics_listen` listener: plain HTTP/1, every connection guarded.
    static func guardedHTTP1(admission: ConnectionAdmission) -> HTTPServerBuilder {
        .init { responder in
            GuardedChannel(
                base: HTTP1Channel(
                    responder: responder,
                    configuration: .init(additionalChannelHandlers: [HTTPPhaseWatcher(adminGate: nil, admission: admission)])),
                admission: admission)
        }
    }
}
