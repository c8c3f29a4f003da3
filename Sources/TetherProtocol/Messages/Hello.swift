/// The first message on every connection (client → server).
public struct Hello: Sendable, Hashable {
    public var protocolVersion: Int
    /// The client's software and release, for the server's logs (`tetherd 0.1.0`).
    public var software: String

    public init(protocolVersion: Int = TetherVersion.syncProtocol, software: String) {
        self.protocolVersion = protocolVersion
        self.software = software
    }
}

/// The server's answer to a compatible ``Hello``.
public struct Welcome: Sendable, Hashable {
    public var protocolVersion: Int
    public var software: String

    public init(protocolVersion: Int = TetherVersion.syncProtocol, software: String) {
        self.protocolVersion = protocolVersion
        self.software = software
    }
}
