/// The first message on every connection (client → server).
package struct Hello: Sendable, Hashable {
    package var protocolVersion: Int
    /// The client's software and release, for the server's logs (`tetherd 0.1.0`).
    package var software: String

    package init(protocolVersion: Int = TetherVersion.syncProtocol, software: String) {
        self.protocolVersion = protocolVersion
        self.software = software
    }
}

/// The server's answer to a compatible ``Hello``.
package struct Welcome: Sendable, Hashable {
    package var protocolVersion: Int
    package var software: String

    package init(protocolVersion: Int = TetherVersion.syncProtocol, software: String) {
        self.protocolVersion = protocolVersion
        self.software = software
    }
}
