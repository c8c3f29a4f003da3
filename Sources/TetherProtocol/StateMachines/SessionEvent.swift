/// What a client session reports to its owner (the agent).
package enum SessionEvent: Sendable, Hashable {
    case bound(BindReply)
    case state(StateChunk)
    case download(Download)
    /// The server's answer to a heal chunk (protocol 4). Not flow-controlled: the client sends
    /// one chunk and waits for its answer.
    case healed(HealReply)
    /// Protocol 9: changes the server reverted instead of integrating; the entry with the
    /// reverts follows. Not flow-controlled.
    case compensatingWrites(CompensatingWrites)
    /// Protocol 9: rows entering and leaving the store on a subscription change. Flow-controlled
    /// like state and download messages.
    case subscriptionChunk(SubscriptionChunk)
    /// A session error from the server; the session is being unbound.
    case error(SyncError)
    /// The server confirmed the unbind: the session id may be bound again.
    case unbound
    /// The connection ended; `error` is the connection-level error when there was one.
    case disconnected(SyncError?)

    /// True for the event that makes the session ready for uploads and downloads: bound
    /// without state to follow, or the last chunk of the state that followed.
    package var makesSessionReady: Bool {
        switch self {
        case .bound(let reply): !reply.stateFollows
        case .state(let chunk): chunk.isLast
        default: false
        }
    }
}
