import TetherTOML

/// `[limits]` of `tether-server.toml` (docs/server.md, "Limits"): what a connection may cost the
/// server before it proves who it is, and how long it may take to. Each limit that closes a
/// connection is counted in `tether_server_connections_limited_total{limit}` under its key.
package struct ConnectionLimits: Sendable, Hashable {
    /// `unauthenticated_bytes`: bytes one connection may send before it authenticates (a bind
    /// whose token names a user, or an admin request with the admin token). HTTP requests
    /// without a token (`/healthz`, `/metrics`) count until answered.
    package var unauthenticatedBytes = 64 * 1024
    /// `unauthenticated_bytes_total`: the same, summed over every unauthenticated connection.
    /// When it is full, a new read closes connections of the peer group holding the most
    /// (``AdmissionLedger``), so one peer cannot lock the others out.
    package var unauthenticatedBytesTotal = 16 * 1024 * 1024
    /// `unauthenticated_bytes_per_peer`: the same, summed over one peer group's connections;
    /// nil (absent): a sixteenth of `unauthenticated_bytes_total`.
    package var unauthenticatedBytesPerPeerSetting: Int?
    /// `unauthenticated_body_bytes`: the largest request body an HTTP request without the
    /// admin token (or a signed-in console session) may carry; a larger one is answered 413.
    package var unauthenticatedBodyBytes = 4096
    /// `connections_per_peer`: open connections from one peer group.
    package var connectionsPerPeer = 256
    /// `ipv6_prefix_length`: IPv6 peers are grouped by this prefix (a /64 is one host's
    /// network); IPv4 peers are grouped by address.
    package var ipv6PrefixLength = 64
    /// `trusted_proxies`: the load balancers whose `X-Forwarded-For` (and PROXY protocol
    /// header, with `proxy_protocol`) name the client a connection is counted for.
    package var trustedProxies: [AddressRange] = []
    /// `proxy_protocol`: connections from `trusted_proxies` begin with a PROXY protocol v2 header.
    package var proxyProtocol = false
    /// `header_timeout_seconds`: time to send a complete HTTP request head, from connecting
    /// or from the first byte after an answered request.
    package var headerTimeout: Duration = .seconds(10)
    /// `request_timeout_seconds`: time from an unauthenticated HTTP request's head to the end
    /// of its answer (its body included).
    package var requestTimeout: Duration = .seconds(10)
    /// `idle_timeout_seconds`: time an HTTP connection may wait between requests.
    package var idleTimeout: Duration = .seconds(60)
    /// `auth_timeout_seconds`: time from the WebSocket upgrade to the first authenticated bind.
    package var authTimeout: Duration = .seconds(10)
    /// `glob_partitions_per_user`: partitions a user may have created through glob grants
    /// (binds to new partitions past it are refused with 206).
    package var globPartitionsPerUser = 1000

    package init() {}

    /// What one peer group may hold: `unauthenticated_bytes_per_peer`, at most the total.
    package var unauthenticatedBytesPerPeer: Int {
        min(unauthenticatedBytesPerPeerSetting ?? unauthenticatedBytesTotal / 16, unauthenticatedBytesTotal)
    }

    /// Reads `[limits]`; absent keys keep their defaults.
    static func parse(_ table: ConfigTable) -> ConnectionLimits {
        var limits = ConnectionLimits()
        if let value = table.integer("unauthenticated_bytes", range: 1024...(64 << 20)) { limits.unauthenticatedBytes = value }
        if let value = table.integer("unauthenticated_bytes_total", range: 64 * 1024...(16 << 30)) {
            limits.unauthenticatedBytesTotal = value
        }
        if let value = table.integer("unauthenticated_bytes_per_peer", range: 1024...(16 << 30)) {
            limits.unauthenticatedBytesPerPeerSetting = value
        }
        if let value = table.integer("unauthenticated_body_bytes", range: 0...(64 << 20)) { limits.unauthenticatedBodyBytes = value }
        if let value = table.integer("connections_per_peer", range: 1...1_000_000) { limits.connectionsPerPeer = value }
        if let value = table.integer("request_timeout_seconds", range: 1...3600) { limits.requestTimeout = .seconds(value) }
        if let value = table.integer("ipv6_prefix_length", range: 1...128) { limits.ipv6PrefixLength = value }
        if let entries = table.stringArray("trusted_proxies") {
            limits.trustedProxies = entries.compactMap { entry in
                guard let range = AddressRange(entry) else {
                    table.problem("trusted_proxies", "\"\(entry)\" is not an IP address or CIDR range (e.g. 10.0.0.0/8, 127.0.0.2, fd00::/8)")
                    return nil
                }
                return range
            }
        }
        if let value = table.bool("proxy_protocol") { limits.proxyProtocol = value }
        if limits.proxyProtocol && limits.trustedProxies.isEmpty {
            table.problem("proxy_protocol", "needs trusted_proxies: only connections from them begin with a PROXY header")
        }
        if let value = table.integer("header_timeout_seconds", range: 1...3600) { limits.headerTimeout = .seconds(value) }
        if let value = table.integer("idle_timeout_seconds", range: 1...86_400) { limits.idleTimeout = .seconds(value) }
        if let value = table.integer("auth_timeout_seconds", range: 1...3600) { limits.authTimeout = .seconds(value) }
        if let value = table.integer("glob_partitions_per_user", range: 1...10_000_000) { limits.globPartitionsPerUser = value }
        if limits.unauthenticatedBytesTotal < limits.unauthenticatedBytes {
            table.problem("unauthenticated_bytes_total", "must be at least unauthenticated_bytes (\(limits.unauthenticatedBytes))")
        }
        if let share = limits.unauthenticatedBytesPerPeerSetting, share > limits.unauthenticatedBytesTotal {
            table.problem(
                "unauthenticated_bytes_per_peer", "must be at most unauthenticated_bytes_total (\(limits.unauthenticatedBytesTotal))")
        }
        return limits
    }
}
