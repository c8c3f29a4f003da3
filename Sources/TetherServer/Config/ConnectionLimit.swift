/// A limit that closed a connection: its `[limits]` key is the metric label and is named in
/// the log line.
enum ConnectionLimit: String, Sendable, CaseIterable {
    case connectionsPerPeer = "connections_per_peer"
    case unauthenticatedBytes = "unauthenticated_bytes"
    case unauthenticatedBytesTotal = "unauthenticated_bytes_total"
    case unauthenticatedBytesPerPeer = "unauthenticated_bytes_per_peer"
    case unauthenticatedBodyBytes = "unauthenticated_body_bytes"
    case requestTimeout = "request_timeout_seconds"
    case headerTimeout = "header_timeout_seconds"
    case idleTimeout = "idle_timeout_seconds"
    case authTimeout = "auth_timeout_seconds"

    /// One line for the log, e.g. "no complete request head within 10 s".
    func reason(_ limits: ConnectionLimits) -> String {
        switch self {
        case .connectionsPerPeer: "more than \(limits.connectionsPerPeer) connections from this peer"
        case .unauthenticatedBytes: "more than \(limits.unauthenticatedBytes) bytes before authenticating"
        case .unauthenticatedBytesTotal:
            "unauthenticated connections hold \(limits.unauthenticatedBytesTotal) bytes in all and this peer the most"
        case .unauthenticatedBytesPerPeer:
            "this peer's unauthenticated connections hold more than \(limits.unauthenticatedBytesPerPeer) bytes in all"
        case .unauthenticatedBodyBytes: "a request body over \(limits.unauthenticatedBodyBytes) bytes before authenticating"
        case .requestTimeout: "a request not answered within \(limits.requestTimeout.components.seconds) s of its head"
        case .headerTimeout: "no complete request head within \(limits.headerTimeout.components.seconds) s"
        case .idleTimeout: "no request for \(limits.idleTimeout.components.seconds) s"
        case .authTimeout: "no authenticated bind within \(limits.authTimeout.components.seconds) s of the upgrade"
        }
    }
}
