import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import HummingbirdWebSocket
import HummingbirdWSClient
import HummingbirdWSTesting
import Logging
import NIOCore
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// ``SyncEndpoint`` served at `/sync` (``SyncListenerChannel``, its ``SyncWorkQueue`` running
/// beside) by an in-process Hummingbird application on a loopback port (HummingbirdTesting's `.live`), over a ``SyncService`` on SQLite in a temporary
/// directory: ``ServerConnection`` and ``SessionStreamer`` driven through a real WebSocket,
/// without a process. One user, `pos`, may read and write `store-*`.
struct InProcessSync: Sendable {
    static let token = "pos-token"
    static let schemas = SchemaRegistry(history: [SchemaRecord(
        schema: Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "a", type: .text, nullable: true),
        ])]),
        isBreaking: false, appliedAt: Date())])

    let storage: SQLiteServerStorage
    let service: SyncService

    /// Runs `body` with a fresh service, its application listening; removes everything after.
    static func run(
        grantRules: String = "", maxUnindexedRows: Int = SubscriptionSettings.defaultMaxUnindexedRows,
        _ body: @Sendable (InProcessSync, any TestClientProtocol) async throws -> Void
    ) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = try SQLiteServerStorage(directory: dir.path)
        let policy = ServerPolicy(
            users: UserDirectory(entries: [(name: "pos", token: token)]), adminToken: TokenDigest(token: "admin"),
            configuredGrants: try grants(grantRules),
            runtimeGrants: [], flags: ServerFlags(), configuredRecovery: true, schemas: schemas)
        let logger = Logger(label: "tether.test.in-process-sync")
        let service = SyncService(
            storage: StorageRoles(storage), hub: SyncHub(), policy: policy, now: { Date() }, logger: logger, maxUnindexedRows: maxUnindexedRows)
        let queue = SyncWorkQueue()
        let endpoint = SyncEndpoint(service: service, queue: queue)
        let app = Application(
            router: Router(context: BasicRequestContext.self),
            server: HTTPServerBuilder { responder in
                SyncListenerChannel(responder: responder, http1: .init(), endpoint: endpoint, socket: SyncSocketConfiguration())
            },
            configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        do {
            try await withThrowingTaskGroup { group in
                group.addTask { await queue.run() }
                defer { group.cancelAll() }
                try await app.test(.live) { client in try await body(InProcessSync(storage: storage, service: service), client) }
            }
            try await storage.close()
        } catch {
            try? await storage.close()  // the test's error is the one to report
            throw error
        }
    }

    /// The grant of `pos` (readwrite on `store-*`) with `rules` (`[[grant.write]]`,
    /// `[[grant.subscription]]` tables) under it.
    static func grants(_ rules: String) throws -> [TetherServer.ServerConfiguration.Grant] {
        try ServerConfiguration.parse(toml: """
            admin_token_file = "/nonexistent/admin.token"
            [[user]]
            name = "pos"
            token_file = "/nonexistent/pos.token"
            [[grant]]
            user = "pos"
            partitions = ["store-*"]
            access = "readwrite"
            \(rules)
            """, file: "server.toml").grants
    }

    /// A new store's bind of `partition` on `session`.
    static func newStore(_ session: SessionID, _ partition: String = "store-1", token: String = token) -> BindRequest {
        BindRequest(session: session, partition: partition, token: token, identity: nil, schemaVersion: 1)
    }

    /// A changeset of a store's uploads: seqs `first...last`, setting `a` of row `id`.
    static func changeset(_ first: Int64, _ last: Int64, id: Int64, a: String) -> UploadChangeset {
        UploadChangeset(firstSeq: first, lastSeq: last, changeset: Changeset([.insert("t", .integer(id), ["a": .text(a)])]))
    }
}

/// A device's end of one `/sync` WebSocket: whole messages, as the protocol defines them.
final class SyncSocket: @unchecked Sendable {
    // Read by one task at a time: the test's body inside the WebSocket handler.
    private var messages: WebSocketInboundMessageStream.AsyncIterator
    private let outbound: WebSocketOutboundWriter

    init(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) {
        self.messages = inbound.messages(maxSize: ProtocolLimits.maxMessageBytes).makeAsyncIterator()
        self.outbound = outbound
    }

    func send(_ message: ClientMessage) async throws { try await outbound.writeBinaryMessage(ByteBuffer(bytes: message.encoded())) }

    /// Bytes that need not be a message (a bad frame's payload).
    func send(bytes: [UInt8]) async throws { try await outbound.writeBinaryMessage(ByteBuffer(bytes: bytes)) }

    func send(text: String) async throws { try await outbound.write(.text(text)) }

    /// The next server message; nil once the server closed the connection.
    func next() async throws -> ServerMessage? {
        switch try await messages.next() {
        case .binary(let buffer): try ServerMessage.decode(Array(buffer.readableBytesView))
        case .text(let text): throw SyncSocketError("the server sent a text message: \(text)")
        case nil: nil
        }
    }

    /// The next server message `match` takes, skipping the others.
    func next<T>(_ what: String, _ match: (ServerMessage) -> T?) async throws -> T {
        while let message = try await next() {
            if let value = match(message) { return value }
        }
        throw SyncSocketError("the connection closed before \(what)")
    }

    /// Every message until the server closes the connection.
    func rest() async throws -> [ServerMessage] {
        var all: [ServerMessage] = []
        while let message = try await next() { all.append(message) }
        return all
    }

    /// Says hello and waits for the welcome.
    func hello() async throws {
        try await send(.hello(Hello(software: "in-process-test")))
        _ = try await next("the welcome") { if case .welcome(let welcome) = $0 { welcome } else { nil } }
    }

    /// Binds a new store and reads its state to the last chunk; returns the bind's reply.
    func bindNewStore(_ session: SessionID, _ partition: String = "store-1") async throws -> BindReply {
        try await send(.bind(InProcessSync.newStore(session, partition)))
        let reply = try await next("the bind's reply") { if case .bound(let reply) = $0, reply.session == session { reply } else { nil } }
        _ = try await next("the last state chunk") { if case .state(let chunk) = $0, chunk.session == session, chunk.isLast { chunk } else { nil } }
        return reply
    }
}

struct SyncSocketError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension TestClientProtocol {
    /// Opens `/sync` and runs `body` on it; the connection closes when `body` returns.
    func sync(_ body: @escaping @Sendable (SyncSocket) async throws -> Void) async throws {
        try await ws("/sync", configuration: .init(maxFrameSize: ProtocolLimits.maxFrameBytes)) { inbound, outbound, _ in
            try await body(SyncSocket(inbound, outbound))
        }
    }
}
