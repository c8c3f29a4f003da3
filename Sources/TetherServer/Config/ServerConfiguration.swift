public import TetherProtocol

/// `tether-server.toml` (SPEC §6, docs/server.md), parsed and validated.
public struct ServerConfiguration: Sendable, Hashable {
    public struct User: Sendable, Hashable {
        public var name: String
        public var tokenFile: String
        public init(name: String, tokenFile: String) {
            self.name = name
            self.tokenFile = tokenFile
        }
    }

    public struct Grant: Sendable, Hashable {
        public var user: String
        public var patterns: [GrantPattern]
        public var access: PartitionAccess
        public init(user: String, patterns: [GrantPattern], access: PartitionAccess) {
            self.user = user
            self.patterns = patterns
            self.access = access
        }
    }

    public struct TLSFiles: Sendable, Hashable {
        public var certificate: String
        public var key: String
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// The file this was read from, for messages.
    public var file: String
    public var listen: ListenAddress
    public var dataDirectory: String
    public var schemaFile: String
    public var adminTokenFile: String
    public var clientRecovery: Bool
    public var tls: TLSFiles?
    /// History older than this may be compacted; devices that last synced before it get 222.
    public var historyHorizonDays: Int
    public var logLevel: ServerLogLevel
    public var users: [User]
    public var grants: [Grant]

    public static let defaultPath = "/etc/tether/tether-server.toml"
    public static let defaultHistoryHorizonDays = 30
}

/// `listen = "host:port"`; port 0 picks a free port (the bound address is logged).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `127.0.0.1:7800`, `[::1]:7800`, `localhost:0`.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" ") else { return nil }
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Log levels as every Tether program names them (SPEC §7, §9).
public enum ServerLogLevel: String, Sendable, Hashable, CaseIterable {
    case fatal, error, warn, info, detail, debug, trace
}
