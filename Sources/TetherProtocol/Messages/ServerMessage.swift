/// Every message the server sends, one per binary WebSocket message.
package enum ServerMessage: Sendable, Hashable {
    case welcome(Welcome)
    case bound(BindReply)
    case state(StateChunk)
    case download(Download)
    case unbound(SessionID)
    case pong(UInt64)
    case error(ErrorMessage)
    /// Healing (protocol 4): the answer to one `heal` chunk.
    case healed(HealReply)
    /// Credential rotation (protocol 7): a new credential for an enrolled device whose
    /// sessions are on this connection, to be written to its token file and acknowledged with
    /// `credential-accepted` (docs/protocol.md, `8b` credential).
    case credential(DeviceCredential)
    /// Remote actions (protocol 8): something an operator asks this device to do, answered
    /// with `action-result` (docs/protocol.md, `8c` action).
    case action(RemoteAction)
    /// Subscriptions (protocol 9): the compensating writes of an integrated upload
    /// (docs/protocol.md, `8d` compensating-writes).
    case compensatingWrites(CompensatingWrites)
    /// Subscriptions (protocol 9): rows entering and leaving a store whose subscriptions
    /// changed (docs/protocol.md, `8e` subscription-chunk).
    case subscriptionChunk(SubscriptionChunk)

    package var session: SessionID? {
        switch self {
        case .welcome, .pong, .credential, .action: nil
        case .bound(let reply): reply.session
        case .state(let chunk): chunk.session
        case .download(let download): download.session
        case .unbound(let session): session
        case .error(let message): message.session
        case .healed(let reply): reply.session
        case .compensatingWrites(let writes): writes.session
        case .subscriptionChunk(let chunk): chunk.session
        }
    }

    package var name: String {
        switch self {
        case .welcome: "welcome"
        case .bound: "bound"
        case .state: "state"
        case .download: "download"
        case .unbound: "unbound"
        case .pong: "pong"
        case .error: "error"
        case .healed: "healed"
        case .credential: "credential"
        case .action: "action"
        case .compensatingWrites: "compensating-writes"
        case .subscriptionChunk: "subscription-chunk"
        }
    }
}
