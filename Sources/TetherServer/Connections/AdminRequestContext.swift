import Hummingbird
import NIOCore

/// The request context of the admin listener (`admin_listen`): Hummingbird's basic context
/// plus the peer's address, which the console's sign-in throttles by.
struct AdminRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address, as the connection guard names it.
    var peer: String { remoteAddress?.ipAddress ?? "unknown" }
}
