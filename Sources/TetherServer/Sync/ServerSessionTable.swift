import TetherProtocol

/// The bound sessions of one connection by session id (``ServerSession``), and the generation
/// the next bind gets. Pure: the connection performs what its changes mean.
struct ServerSessionTable: Sendable {
    private var sessions: [SessionID: ServerSession] = [:]
    private var nextGeneration: UInt64 = 1

    subscript(id: SessionID) -> ServerSession? { sessions[id] }

    var count: Int { sessions.count }

    /// Records an accepted bind with a new generation and a fresh send window (limited when
    /// the connection negotiated flow control). A window of an earlier bind of the same id is
    /// closed, so its streamer stops.
    mutating func bind(
        _ id: SessionID, as bound: BoundSession, flowControl: Bool, wakeups: DownloadWakeup, after: ServerVersion,
        file: ReadyFileHandle? = nil
    ) -> ServerSession {
        sessions[id]?.window.close()
        let session = ServerSession(
            bound: bound, generation: nextGeneration,
            window: SendWindow(initial: flowControl ? ProtocolLimits.initialSendWindow : nil),
            streamStart: ServerSession.StreamStart(wakeups: wakeups, after: after, file: file))
        nextGeneration += 1
        sessions[id] = session
        return session
    }

    /// The step of the bind of `generation` is over: no streamer starts for it any more (a
    /// later bind of the same id keeps its own start).
    mutating func bindPerformed(_ id: SessionID, generation: UInt64) {
        guard isCurrent(id, generation: generation) else { return }
        sessions[id]?.streamStart = nil
    }

    /// Whether `generation` is the session's current bind.
    func isCurrent(_ id: SessionID, generation: UInt64) -> Bool {
        sessions[id]?.generation == generation
    }

    /// Removes the session and closes its send window; returns what it was, nil when it was not bound.
    mutating func release(_ id: SessionID) -> ServerSession? {
        guard let session = sessions.removeValue(forKey: id) else { return nil }
        session.window.close()
        return session
    }
}
