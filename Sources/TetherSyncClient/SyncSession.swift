import TetherProtocol

/// One partition bound on a ``SyncConnection``. Its events arrive in order: `bound` (or
/// `error`), state chunks for a new store or a reset, then downloads (and `healed`, the
/// answers to ``heal(_:)``); `error` when the server ends the session (it is then unbound
/// automatically), `unbound`, or `disconnected` when the connection ends. The stream
/// finishes after the last of these.
package struct SyncSession: Sendable {
    package let id: SessionID
    package let partition: String
    package let events: SessionEvents
    let connection: SyncConnection

    /// Sends local changes; they are acknowledged by a download entry whose
    /// `integratedClientSeq` covers them. Throws when the session is not active or read-only.
    package func upload(_ changesets: [UploadChangeset]) async throws {
        try await connection.request(id, .uploadRequested(Upload(session: id, changesets: changesets)))
    }

    /// Sends one chunk of a heal contribution (protocol 4, docs/protocol.md "`07` heal"); the
    /// server's answer arrives on ``events`` as `healed`, possibly after downloads, so the
    /// caller keeps consuming events while it waits. Send the next chunk only after the answer.
    /// Throws when the session is not active or read-only.
    package func heal(_ chunk: HealChunk) async throws {
        try await connection.request(id, .healRequested(chunk))
    }

    /// Asks the server to end the session; `unbound` follows.
    package func unbind() async throws {
        try await connection.request(id, .unbindRequested)
    }
}
