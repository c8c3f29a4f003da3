/// Every message a client sends, one per binary WebSocket message.
package enum ClientMessage: Sendable, Hashable {
    case hello(Hello)
    case bind(BindRequest)
    case upload(Upload)
    case unbind(SessionID)
    case ping(UInt64)
    /// Flow control (protocol 2): the client may receive `messages` more state or download
    /// messages for the session (docs/protocol.md, Flow control).
    case credit(SessionID, messages: Int)
    /// Healing (protocol 4): one chunk of the device's view of a restored partition's lost
    /// window (docs/protocol.md, `07` heal); the server answers with `healed`.
    case heal(HealChunk)
    /// Device reports (protocol 6): what the device says of itself and its partitions, for
    /// the server's device ledger (docs/protocol.md, `08` report). No answer.
    case report(DeviceReport)
    /// Credential rotation (protocol 7): the device wrote the credential the server handed it
    /// (`credential`) to its token file; carries the SHA-256 of its secret
    /// (docs/protocol.md, `09` credential-accepted). No answer.
    case credentialAccepted(digest: [UInt8])
    /// Remote actions (protocol 8): what became of an `action` the server sent
    /// (docs/protocol.md, `0a` action-result). No answer.
    case actionResult(RemoteActionResult)

    /// The session a message concerns, nil for connection-level messages.
    package var session: SessionID? {
        switch self {
        case .hello, .ping, .report, .credentialAccepted, .actionResult: nil
        case .bind(let bind): bind.session
        case .upload(let upload): upload.session
        case .heal(let chunk): chunk.session
        case .unbind(let session), .credit(let session, _): session
        }
    }

    /// Name for logs (no contents).
    package var name: String {
        switch self {
        case .hello: "hello"
        case .bind: "bind"
        case .upload: "upload"
        case .unbind: "unbind"
        case .ping: "ping"
        case .credit: "credit"
        case .heal: "heal"
        case .report: "report"
        case .credentialAccepted: "credential-accepted"
        case .actionResult: "action-result"
        }
    }
}
