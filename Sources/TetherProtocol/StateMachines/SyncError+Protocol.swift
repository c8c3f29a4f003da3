extension SyncError {
    /// 109: a message that is not allowed in the session's or connection's current state.
    package static func badMessageOrder(_ message: String, in state: some CustomStringConvertible, session: SessionID? = nil) -> SyncError {
        let whose = session.map { "session \($0)" } ?? "the connection"
        return SyncError(.badMessageOrder, "\(message) is not allowed while \(whose) is \(state)")
    }

    /// 105, naming both versions.
    package static func wrongProtocolVersion(client: Int, server: Int) -> SyncError {
        SyncError(
            .wrongProtocolVersion,
            "client speaks sync protocol \(client), server speaks sync protocol \(server)")
    }
}
