import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of the sync listener: Hummingbird's WebSocket context plus the
/// connection's channel, through which the sync endpoint tells the ``ConnectionGuard`` that
/// the connection upgraded and authenticated.
struct TetherRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }

    /// The client: the one a trusted proxy named for this connection (`[limits]
    /// trusted_proxies`), else the socket's peer (`/enroll` throttles it).
    func client(_ admission: ConnectionAdmission) -> String {
        admission.client(of: ObjectIdentifier(channel)) ?? channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// What the sync endpoint reports about this connection.
    var gate: ConnectionGate {
        let channel = self.channel
        return ConnectionGate { event in channel.pipeline.fireUserInboundEventTriggered(event) }
    }
}

/// How the sync endpoint reports a connection's progress to its guard (a no-op in tests that
/// drive the endpoint without a network).
package struct ConnectionGate: Sendable {
    let report: @Sendable (ConnectionGuardEvent) -> Void

    init(_ report: @escaping @Sendable (ConnectionGuardEvent) -> Void) { self.report = report }

    package static let none = ConnectionGate { _ in }

    func upgraded() { report(.upgraded) }
    func authenticated() { report(.authenticated) }
}
