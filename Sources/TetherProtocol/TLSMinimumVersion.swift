/// The oldest TLS version a side accepts: `tls_min_version` of tetherd's `[server]` and of
/// tether-server (docs/configuration.md, docs/server.md). TLS 1.0 and 1.1 are not offered:
/// both are deprecated (RFC 8996), and nothing Tether runs on lacks TLS 1.2.
package enum TLSMinimumVersion: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case tls12 = "1.2"
    case tls13 = "1.3"

    package static let `default` = TLSMinimumVersion.tls12

    package var description: String { "TLS \(rawValue)" }
}
