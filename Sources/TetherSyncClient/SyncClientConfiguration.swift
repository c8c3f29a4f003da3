import NIOSSL
import TetherProtocol

/// Where and how a ``SyncConnection`` connects.
package struct SyncClientConfiguration: Sendable {
    /// `ws://host:port/sync` or `wss://host:port/sync`.
    package var url: String
    /// For `wss://`: trust roots and the like; nil uses the system's roots (and NIOSSL's
    /// defaults). ``init(url:trust:software:keepAlive:sourceAddress:)`` sets it from a ``ServerTrust``.
    package var tlsConfiguration: TLSConfiguration?
    /// For `wss://`: once the chain verified, the server's certificate must carry one of these
    /// public keys, or the connection fails with ``SyncClientError/serverKeyNotPinned(_:)``.
    /// Empty: no pinning.
    package var pinnedKeys: [ServerKeyPin] = []
    /// Sent in the hello, for the server's logs (`tetherd 0.1.0`).
    package var software: String
    /// WebSocket pings to detect a dead connection; nil disables them.
    package var keepAlive: Duration?
    /// The local IP address to connect from; nil lets the system choose. For a device with
    /// several networks, and for load tests that need more than one address's ephemeral ports
    /// (about 28,000 connections per source address to one server address).
    package var sourceAddress: String?

    package init(
        url: String, tlsConfiguration: TLSConfiguration? = nil, software: String = "tether-client \(TetherVersion.release)",
        keepAlive: Duration? = .seconds(30), sourceAddress: String? = nil
    ) {
        self.url = url
        self.tlsConfiguration = tlsConfiguration
        self.software = software
        self.keepAlive = keepAlive
        self.sourceAddress = sourceAddress
    }

    /// A connection that trusts the server as `trust` says (roots, pinned keys, minimum version).
    package init(
        url: String, trust: ServerTrust, software: String = "tether-client \(TetherVersion.release)",
        keepAlive: Duration? = .seconds(30), sourceAddress: String? = nil
    ) {
        self.init(url: url, tlsConfiguration: trust.tlsConfiguration, software: software, keepAlive: keepAlive, sourceAddress: sourceAddress)
        pinnedKeys = trust.pinnedKeys
    }
}
