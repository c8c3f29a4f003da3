/// `listen = "host:port"`; port 0 picks a free port (the bound address is logged).
package struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `127.0.0.1:7800`, `[::1]:7800`, `localhost:0`.
    package init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" ") else { return nil }
        self.host = host
        self.port = port
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
