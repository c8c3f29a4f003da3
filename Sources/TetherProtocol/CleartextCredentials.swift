/// Whether a URL would carry a token in clear to another machine: `ws://` or `http://` to a host
/// that is not this machine's loopback (127.0.0.0/8, `::1`, `localhost`). The agent warns at
/// start and at `--check-config`, the admin client at every command (docs/operations.md).
package enum CleartextCredentials {
    /// The host a token would travel to in clear, or nil when the URL is encrypted or local.
    package static func exposedHost(in url: String) -> String? {
        let lowered = url.lowercased()
        guard let scheme = ["ws://", "http://"].first(where: { lowered.hasPrefix($0) }) else { return nil }
        var rest = Substring(lowered.dropFirst(scheme.count))
        rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        let host: Substring
        if rest.hasPrefix("[") {
            host = rest.dropFirst().prefix { $0 != "]" }
        } else {
            host = rest.prefix { $0 != ":" }
        }
        return isLoopback(String(host)) ? nil : String(host)
    }

    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
