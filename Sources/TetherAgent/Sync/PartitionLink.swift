import TetherSyncClient
import TetherProtocol

/// What a partition needs of the server connection: a session per bind. The agent's
/// ``SyncConnection`` in production; a scripted one in the controller's tests.
protocol PartitionLink: Sendable {
    /// Sends the bind; the outcome arrives on the session's events.
    func openSession(_ request: BindRequest) async throws -> any LinkSession
    var isClosed: Bool { get async }
}

/// One bound partition on a ``PartitionLink``, as the link carries it (a ``SyncSession`` in
/// production); ``PartitionSession`` is what the controller keeps of the bind.
protocol LinkSession: Sendable {
    var events: SessionEvents { get }
    func upload(_ changesets: [UploadChangeset]) async throws
    func unbind() async throws
}

extension SyncConnection: PartitionLink {
    func openSession(_ request: BindRequest) async throws -> any LinkSession {
        try await bind(request)
    }
}

extension SyncSession: LinkSession {}
