import TetherProtocol

/// One bound session of a ``ServerConnection``: everything the connection knows of it, in one
/// value, so none of it can outlive the rest (a send window without a session, a stream start
/// without a bind).
struct ServerSession: Sendable {
    /// Where its streamer starts: the hub's wakeups for its partition and the version it
    /// downloads after.
    struct StreamStart: Sendable {
        var wakeups: DownloadWakeup
        var after: ServerVersion
        /// The ready file its state comes as (nil: rows).
        var file: ReadyFileHandle?
    }

    /// The session as the rest of the server sees it.
    let bound: BoundSession
    /// Tells this bind from an earlier or later one of the same session id: a streamer or a
    /// pushed failure of an older bind is ignored.
    let generation: UInt64
    /// Its flow control (protocol 2; unlimited on a protocol-1 connection).
    let window: SendWindow
    /// Set only while the connection performs the accepted bind, whose actions start the
    /// streamer; nil once that step is over, so no later step starts a second one.
    var streamStart: StreamStart?
}
