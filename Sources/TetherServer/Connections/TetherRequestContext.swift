import Hummingbird
import NIOCore

/// The request context of the devices' listener: Hummingbird's plus the connection's channel,
/// whose client `/enroll` throttles. (`/sync` is not a route: ``SyncListenerChannel``.)
struct TetherRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The client: the one a trusted proxy named for this connection (`[limits]
    /// trusted_proxies`), else the socket's peer (`/enroll` throttles it).
    func client(_ admission: ConnectionAdmission) -> String {
        admission.client(of: ObjectIdentifier(channel)) ?? channel.remoteAddress?.ipAddress ?? "unknown"
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
