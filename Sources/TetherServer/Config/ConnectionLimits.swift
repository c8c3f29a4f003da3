import TetherTOML

/// `[limits]` of `tether-server.toml` (docs/server.md, "Limits"): what a connection may cost the
/// server before it proves who it is, and how long it may take to. Each limit that closes a
/// connection is counted in `tether_server_connections_limited_total{limit}` under its key.
public struct ConnectionLimits: Sendable, Hashable {
    /// `unauthenticated_bytes`: bytes one connection may send before it authenticates (a bind
    /// whose token names a user, or an admin request with the admin token). HTTP requests
    /// without a token (`/healthz`, `/metrics`) count until answered.
    public var unauthenticatedBytes = 64 * 1024
    /// `unauthenticated_bytes_total`: the same, summed over every unauthenticated connection.
    public var unauthenticatedBytesTotal = 16 * 1024 * 1024
    /// `connections_per_peer`: open connections from one IP address.
    public var connectionsPerPeer = 256
    /// `header_timeout_seconds`: time to send a complete HTTP request head, from connecting
    /// or from the first byte after an answered request.
    public var headerTimeout: Duration = .seconds(10)
    /// `idle_timeout_seconds`: time an HTTP connection may wait between requests.
    public var idleTimeout: Duration = .seconds(60)
    /// `auth_timeout_seconds`: time from the WebSocket upgrade to the first authenticated bind.
    public var authTimeout: Duration = .seconds(10)
    /// `glob_partitions_per_user`: partitions a user may have created through glob grants
    /// (binds to new partitions past it are refused with 206).
    public var globPartitionsPerUser = 1000

    public init() {}

    /// Reads `[limits]`; absent keys keep their defaults.
    static func parse(_ table: ConfigTable) -> ConnectionLimits {
        var limits = ConnectionLimits()
        if let value = table.integer("unauthenticated_bytes", range: 1024...(64 << 20)) { limits.unauthenticatedBytes = value }
        if let value = table.integer("unauthenticated_bytes_total", range: 64 * 1024...(16 << 30)) {
            limits.unauthenticatedBytesTotal = value
        }
        if let value = table.integer("connections_per_peer", range: 1...1_000_000) { limits.connectionsPerPeer = value }
        if let value = table.integer("header_timeout_seconds", range: 1...3600) { limits.headerTimeout = .seconds(value) }
        if let value = table.integer("idle_timeout_seconds", range: 1...86_400) { limits.idleTimeout = .seconds(value) }
        if let value = table.integer("auth_timeout_seconds", range: 1...3600) { limits.authTimeout = .seconds(value) }
        if let value = table.integer("glob_partitions_per_user", range: 1...10_000_000) { limits.globPartitionsPerUser = value }
        if limits.unauthenticatedBytesTotal < limits.unauthenticatedBytes {
            table.problem("unauthenticated_bytes_total", "must be at least unauthenticated_bytes (\(limits.unauthenticatedBytes))")
        }
        return limits
    }
}
