import Foundation

/// Where a dialer connects: the host (an IPv6 address without its brackets), the port (the
/// scheme's default when the URL names none), the path with its query, and whether TLS is
/// used. The WebSocket dialer takes `ws`/`wss` URLs, the enrollment post `http`/`https`.
struct ServerTarget: Sendable, Hashable {
    var host: String
    var port: Int
    var path: String
    var secure: Bool

    init(url: String, plain: String, secure secureScheme: String) throws(SyncClientError) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == plain || scheme == secureScheme,
            let host = parsed.host, !host.isEmpty
        else { throw SyncClientError.unreachable("\(url) is not a \(plain):// or \(secureScheme):// URL") }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        secure = scheme == secureScheme
        port = parsed.port ?? (secure ? 443 : 80)
        let pathPart = parsed.path.isEmpty ? "/" : parsed.path
        path = pathPart + (parsed.query.map { "?\($0)" } ?? "")
    }

    /// The `Host` header: the port only when it is not the scheme's default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }
}
