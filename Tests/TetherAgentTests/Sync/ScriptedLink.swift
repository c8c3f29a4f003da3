import Foundation
import Logging
import Synchronization
import TetherSyncClient
import TetherProtocol
import TetherStore
import TetherTestSupport
@testable import TetherAgent

/// Plays the server side of a partition's sessions for ``PartitionController`` tests: records
/// each bind, lets the test send the session's events, records uploads and unbinds.
final class ScriptedLink: PartitionLink {
    private let sessions = Mutex<[ScriptedSession]>([])
    private let closed = Mutex(false)

    func openSession(_ request: BindRequest) async throws -> any LinkSession {
        let session = ScriptedSession(request: request)
        sessions.withLock { $0.append(session) }
        return session
    }

    var isClosed: Bool { closed.withLock { $0 } }

    var binds: [ScriptedSession] { sessions.withLock { $0 } }

    /// Waits for bind number `count` (counting from 1).
    func bind(_ count: Int) async throws -> ScriptedSession {
        try await eventually("bind \(count)", timeout: .seconds(20)) {
            let all = binds
            return all.count >= count ? all[count - 1] : nil
        }
    }

    /// Ends the connection: every open session sees it.
    func close() {
        closed.withLock { $0 = true }
        for session in binds { session.send(.disconnected(nil)) }
    }
}

final class ScriptedSession: LinkSession {
    let request: BindRequest
    let events: SessionEvents
    private let continuation: AsyncStream<SessionEvent>.Continuation
    private let state = Mutex<(uploads: [UploadChangeset], unbinds: Int)>(([], 0))
    private let granted = Granted()

    final class Granted: Sendable {
        let messages = Mutex(0)
    }

    init(request: BindRequest) {
        self.request = request
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self)
        self.continuation = continuation
        let granted = self.granted
        events = SessionEvents(stream) { messages in granted.messages.withLock { $0 += messages } }
    }

    /// What the controller granted back (flow control), in messages.
    var credit: Int { granted.messages.withLock { $0 } }

    func send(_ event: SessionEvent) { continuation.yield(event) }

    func upload(_ changesets: [UploadChangeset]) async throws {
        state.withLock { $0.uploads += changesets }
    }

    func unbind() async throws {
        state.withLock { $0.unbinds += 1 }
        continuation.yield(.unbound)
        continuation.finish()
    }

    var uploads: [UploadChangeset] { state.withLock { $0.uploads } }
    var unbinds: Int { state.withLock { $0.unbinds } }

    /// The server's bind answer for a store it knows, at `version`.
    func acceptKnownStore(version: Int64, salt: Int64 = 1, schema: Schema = ResetFixture.schema) {
        send(
            .bound(
                BindReply(
                    session: request.session, identity: request.identity ?? ClientFileIdentity(id: 1, salt: 1), isNewIdentity: false,
                    stateFollows: false, access: .readwrite, latestServerVersion: ServerVersion(version: version, salt: salt),
                    integratedClientSeq: 0, schema: schema)))
    }
}

/// The agent around a controller: its state database, configuration and token, without a
/// network (the server's state for a reset comes from a ``StagedServer``).
final class ScriptedAgent: AgentContext {
    let stateDatabase: AgentStateDatabase
    let logger: Logger
    let fetcher: any ServerStateFetcher
    let healer: any HealContributor
    let resetLoopLimits = ResetLoopGuard.Limits()
    let events = AgentEvents()
    private let config: AgentConfiguration
    private let counter = Mutex<SessionID>(0)
    private let connectionErrors = Mutex<[SyncError]>([])
    private let cancelNextBind = Mutex(false)
    /// What the sessions told of their binds' tokens: "refused t0ken", "accepted t0ken".
    let credentialAnswers = Mutex<[String]>([])

    /// The next bind's task is cancelled right after it read the token, as when the connection
    /// closes while the partition opens its store.
    func cancelDuringNextBind() { cancelNextBind.withLock { $0 = true } }

    init(_ fixture: ResetFixture) throws {
        stateDatabase = fixture.stateDatabase
        logger = fixture.log.logger
        fetcher = fixture.fetcher
        healer = fixture.healer
        try "t0ken\n".write(toFile: fixture.dir.appending("token"), atomically: false, encoding: .utf8)
        chmod(fixture.dir.appending("token"), 0o600)
        config = try AgentConfiguration.parse(
            text: """
                state_dir = "\(fixture.dir.path)"
                [server]
                url = "ws://127.0.0.1:1/sync"
                token_file = "\(fixture.dir.appending("token"))"
                [[partition]]
                name = "\(ResetFixture.partition)"
                store = "\(fixture.store.path)"
                """, file: "tetherd.toml")
    }

    func configuration() async -> AgentConfiguration { config }
    func nextSessionID() async -> SessionID { counter.withLock { $0 += 1; return $0 } }
    func readToken() async throws -> String {
        let cancel = cancelNextBind.withLock { flag in
            defer { flag = false }
            return flag
        }
        if cancel { withUnsafeCurrentTask { task in task?.cancel() } }
        return "t0ken"
    }
    func credentialRefused(_ token: String) async { credentialAnswers.withLock { $0.append("refused \(token)") } }
    func credentialAccepted(_ token: String) async { credentialAnswers.withLock { $0.append("accepted \(token)") } }
    func statusChanged() {}
    func connectionFailed(_ error: SyncError) async { connectionErrors.withLock { $0.append(error) } }
}
