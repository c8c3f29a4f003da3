import Hummingbird
import NIOCore

/// The request context of the admin listener (`admin_listen`): Hummingbird's basic context
/// plus the peer's address and the connection's channel, by which the console's sign-in finds
/// the client a trusted proxy named (``ConnectionAdmission/client(of:)``) and throttles it.
struct AdminRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    let channel: ObjectIdentifier

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = ObjectIdentifier(source.channel)
    }

    /// The socket's peer IP address (a trusted proxy's, behind one).
    var peer: String { remoteAddress?.ipAddress ?? "unknown" }

    /// The client: the one a trusted proxy named for this connection (`[limits]
    /// trusted_proxies`), else the socket's peer.
    func client(_ admission: ConnectionAdmission) -> String { admission.client(of: channel) ?? peer }
}
