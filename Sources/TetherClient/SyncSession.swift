public import TetherProtocol

/// One partition bound on a ``SyncConnection``. Its events arrive in order: `bound` (or
/// `error`), state chunks for a new store or a reset, then downloads; `error` when the
/// server ends the session (it is then unbound automatically), `unbound`, or
/// `disconnected` when the connection ends. The stream finishes after the last of these.
public struct SyncSession: Sendable {
    public let id: SessionID
    public let partition: String
    public let events: SessionEvents
    let connection: SyncConnection

    /// Sends local changes; they are acknowledged by a download entry whose
    /// `integratedClientSeq` covers them. Throws when the session is not active or read-only.
    public func upload(_ changesets: [UploadChangeset]) async throws {
        try await connection.request(id, .uploadRequested(Upload(session: id, changesets: changesets)))
    }

    /// Asks the server to end the session; `unbound` follows.
    public func unbind() async throws {
        try await connection.request(id, .unbindRequested)
    }
}
