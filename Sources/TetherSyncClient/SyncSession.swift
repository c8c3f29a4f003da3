public import TetherProtocol

/// One partition bound on a ``SyncConnection``. Its events arrive in order: `bound` (or
/// `error`), state chunks for a new store or a reset, then downloads (and `healed`, the
/// answers to ``heal(_:)``); `error` when the server ends the session (it is then unbound
/// automatically), `unbound`, or `disconnected` when the connection ends. The stream
/// finishes after the last of these.
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

    /// Sends one chunk of a heal contribution (protocol 4, docs/protocol.md "`07` heal"); the
    /// server's answer arrives on ``events`` as `healed`, possibly after downloads, so the
    /// caller keeps consuming events while it waits. Send the next chunk only after the answer.
    /// Throws when the session is not active or read-only.
    public func heal(_ chunk: HealChunk) async throws {
        try await connection.request(id, .healRequested(chunk))
    }

    /// Asks the server to end the session; `unbound` follows.
    public func unbind() async throws {
        try await connection.request(id, .unbindRequested)
    }
}
