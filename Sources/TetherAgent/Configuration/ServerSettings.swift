/// The `[server]` table.
public struct ServerSettings: Sendable, Hashable {
    /// `ws://` or `wss://` URL of the server's `/sync` endpoint.
    public var url: String
    public var tokenFile: String
    public var caFile: String?

    public init(url: String, tokenFile: String, caFile: String? = nil) {
        self.url = url
        self.tokenFile = tokenFile
        self.caFile = caFile
    }

    public var usesTLS: Bool { url.hasPrefix("wss://") }
}
