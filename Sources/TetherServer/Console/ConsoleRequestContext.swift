import Hummingbird
import NIOCore

/// The request context of the console's routes (`/console`, a group of the admin listener's
/// router): the admin listener's context plus the console session
/// ``ConsoleSessionMiddleware`` resolved from the session cookie (nil without one), and forms
/// decoded with Hummingbird's `URLEncodedFormDecoder`, 64 KiB at most.
struct ConsoleRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection's peer address and channel, for the client a trusted proxy named.
    let admin: AdminRequestContext
    /// The signed-in session of the request's cookie, and its id; nil before the middleware ran
    /// or without a live session.
    var session: ConsoleSessions.Session?
    var sessionID: String?

    init(context: AdminRequestContext) {
        coreContext = context.coreContext
        admin = context
    }

    var requestDecoder: URLEncodedFormDecoder { URLEncodedFormDecoder() }

    /// A console form holds a few fields: 64 KiB is plenty.
    var maxUploadSize: Int { 64 << 10 }

    /// The client: the one a trusted proxy named for this connection, else the socket's peer.
    func client(_ admission: ConnectionAdmission) -> String { admin.client(admission) }
}
