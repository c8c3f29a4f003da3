public import NIOSSL
import TetherProtocol

/// Where and how a ``SyncConnection`` connects.
public struct SyncClientConfiguration: Sendable {
    /// `ws://host:port/sync` or `wss://host:port/sync`.
    public var url: String
    /// For `wss://`: trust roots (`[server] ca_file`) and the like; nil uses the system's.
    public var tlsConfiguration: TLSConfiguration?
    /// Sent in the hello, for the server's logs (`tetherd 0.1.0`).
    public var software: String
    /// WebSocket pings to detect a dead connection; nil disables them.
    public var keepAlive: Duration?

    public init(url: String, tlsConfiguration: TLSConfiguration? = nil, software: String = "tether-client \(TetherVersion.release)", keepAlive: Duration? = .seconds(30)) {
        self.url = url
        self.tlsConfiguration = tlsConfiguration
        self.software = software
        self.keepAlive = keepAlive
    }
}
