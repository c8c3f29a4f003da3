/// Why no WebSocket could be opened, told by the failure's type: NIO's connect and resolver
/// errors, its HTTP upgrade errors, the dialer's own upgrade guard, NIOSSL's errors. The agent
/// names its transport failures by it (docs/events.md, `sync-error`'s `name`).
package enum UnreachableCause: Sendable, Hashable, CaseIterable {
    /// The server's host refused the TCP connection (`ECONNREFUSED`).
    case connectionRefused
    /// The TCP connect did not complete in time (NIO's connect timeout, `ETIMEDOUT`).
    case timedOut
    /// The server's host name could not be resolved.
    case nameResolution
    /// The TCP connection opened but the WebSocket upgrade failed: declined (an answer other
    /// than `101`), an answer NIO's upgrader refuses, closed before the answer, or no answer
    /// within the deadline.
    case upgradeFailed
    /// TLS could not be set up before any handshake: the URL cannot carry the host as SNI, or
    /// the TLS context cannot be made.
    case tls
    /// Anything else: no route, a malformed URL, a source address that is not an IP address, …
    case other
}
