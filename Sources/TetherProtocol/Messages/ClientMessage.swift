/// Every message a client sends, one per binary WebSocket message.
public enum ClientMessage: Sendable, Hashable {
    case hello(Hello)
    case bind(BindRequest)
    case upload(Upload)
    case unbind(SessionID)
    case ping(UInt64)

    /// The session a message concerns, nil for connection-level messages.
    public var session: SessionID? {
        switch self {
        case .hello, .ping: nil
        case .bind(let bind): bind.session
        case .upload(let upload): upload.session
        case .unbind(let session): session
        }
    }

    /// Name for logs (no contents).
    public var name: String {
        switch self {
        case .hello: "hello"
        case .bind: "bind"
        case .upload: "upload"
        case .unbind: "unbind"
        case .ping: "ping"
        }
    }
}

/// Every message the server sends, one per binary WebSocket message.
public enum ServerMessage: Sendable, Hashable {
    case welcome(Welcome)
    case bound(BindReply)
    case state(StateChunk)
    case download(Download)
    case unbound(SessionID)
    case pong(UInt64)
    case error(ErrorMessage)

    public var session: SessionID? {
        switch self {
        case .welcome, .pong: nil
        case .bound(let reply): reply.session
        case .state(let chunk): chunk.session
        case .download(let download): download.session
        case .unbound(let session): session
        case .error(let message): message.session
        }
    }

    public var name: String {
        switch self {
        case .welcome: "welcome"
        case .bound: "bound"
        case .state: "state"
        case .download: "download"
        case .unbound: "unbound"
        case .pong: "pong"
        case .error: "error"
        }
    }
}
