import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// Heal chunks (protocol 4) through the sync service against a real SQLite storage: who may
/// heal, the schema check, how storage failures end the session, and that what a chunk healed
/// reaches the partition's other sessions as an upload's changes do.
@Suite struct SyncServiceHealTests {
    static let schemas = SchemaRegistry(history: [SchemaRecord(
        schema: Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "a", type: .text, nullable: true),
        ])]),
        isBreaking: false, appliedAt: Date())])

    static func grants(_ access: String) -> String {
        "[[grant]]\nuser = \"pos\"\npartitions = [\"store-*\"]\naccess = \"\(access)\""
    }

    static func chunk(session: SessionID = 1, rows: Changeset = Changeset([.insert("t", .integer(1), ["a": .text("x")])])) -> HealChunk {
        HealChunk(
            session: session, contribution: 9, view: ServerVersion(version: 3, salt: 4), base: 5, isFinal: false,
            unknown: ChangeRows(Changeset()), rows: ChangeRows(rows))
    }

    /// Binds `store-1` and returns the session and its download wakeups, the first one taken.
    static func bind(
        _ fixture: SyncServiceAdmissionTests.Fixture, session: SessionID = 1, connection: UInt64 = 1
    ) async throws -> (BoundSession, AsyncStream<Void>.AsyncIterator) {
        guard case .accepted(_, _, let bound, let wakeups, _) = await SyncServiceAdmissionTests.bind(
            fixture.service, "store-1", session: session, connection: connection)
        else { throw StorageError.unavailable("the bind was refused") }
        var iterator = wakeups.runs().makeAsyncIterator()
        _ = await iterator.next()
        return (bound, iterator)
    }

    func fixture(access: String = "readwrite") async throws -> SyncServiceAdmissionTests.Fixture {
        try await SyncServiceAdmissionTests.fixture(grants: Self.grants(access), schemas: Self.schemas)
    }

    @Test func aChunkIsAnsweredAndCountedByOutcome() async throws {
        let fixture = try await fixture()
        defer { fixture.dir.remove() }
        let (session, _) = try await Self.bind(fixture)
        // No heal is open for the partition: the storage does not want the view.
        let reply = try await fixture.service.heal(Self.chunk(), for: session).get()
        #expect(reply.session == 1 && reply.contribution == 9 && reply.outcome == .notWanted)
        let text = fixture.service.metrics.exposition(await fixture.service.metricsSnapshot())
        #expect(text.contains(#"tether_server_heal_chunks_total{outcome="not-wanted"} 1"#))
        #expect(text.contains(#"tether_server_heal_chunks_total{outcome="completed"} 0"#))
        #expect(text.contains("# TYPE tether_server_heal_chunks_total counter"))
    }

    @Test func aReadOnlySessionsChunkIsNotWantedWithoutReachingTheStorage() async throws {
        let fixture = try await fixture(access: "read")
        defer { fixture.dir.remove() }
        fixture.heals.answerHeals { _ in throw StorageError.corrupt("a read-only session's chunk reached the storage") }
        let (session, _) = try await Self.bind(fixture)
        let reply = try await fixture.service.heal(Self.chunk(), for: session).get()
        #expect(reply.outcome == .notWanted)
        #expect(reply.reason == "the partition is read-only for this user")
        #expect(reply.healedChanges == 0)
    }

    @Test func rowsOrUnknownKeysThatDoNotFitTheSchemaAre225() async throws {
        let fixture = try await fixture()
        defer { fixture.dir.remove() }
        fixture.heals.answerHeals { _ in throw StorageError.corrupt("a misfit reached the storage") }
        let (session, _) = try await Self.bind(fixture)
        var misfits = [
            Self.chunk(rows: Changeset([.insert("nope", .integer(1), [:])])),
            Self.chunk(rows: Changeset([.insert("t", .text("not an integer"), ["a": .null])])),
        ]
        misfits.append(Self.chunk())
        misfits[2].unknown = ChangeRows(Changeset([.delete("nope", .integer(1))]))
        for chunk in misfits {
            guard case .failure(let error) = await fixture.service.heal(chunk, for: session) else {
                Issue.record("a misfit was accepted")
                continue
            }
            #expect(error.code.rawValue == 225)
        }
    }

    @Test(.timeLimit(.minutes(1))) func whatAChunkHealedWakesThePartitionsSessions() async throws {
        let fixture = try await fixture()
        defer { fixture.dir.remove() }
        fixture.heals.answerHeals { HealReply(session: $0.session, contribution: $0.contribution, outcome: .accepted, healedChanges: 1) }
        let (session, _) = try await Self.bind(fixture)
        var (_, other) = try await Self.bind(fixture, session: 1, connection: 2)
        let reply = try await fixture.service.heal(Self.chunk(), for: session).get()
        #expect(reply.outcome == .accepted && reply.healedChanges == 1)
        // The other session's streamer is woken to download the healed entry.
        #expect(await other.next() != nil)
    }

    @Test func storageFailuresEndTheSessionAsAnUploadsDo() async throws {
        let fixture = try await fixture()
        defer { fixture.dir.remove() }
        let (session, _) = try await Self.bind(fixture)
        fixture.heals.answerHeals { _ in throw StorageError.fenced("partition store-1") }
        guard case .failure(let fenced) = await fixture.service.heal(Self.chunk(), for: session) else {
            Issue.record("a fenced chunk was answered")
            return
        }
        #expect(fenced == fixture.service.fence.fenced("partition store-1"))
        fixture.heals.answerHeals { _ in throw StorageError.unavailable("database is locked") }
        guard case .failure(let transient) = await fixture.service.heal(Self.chunk(), for: session) else {
            Issue.record("a chunk the storage failed was answered")
            return
        }
        #expect(transient == SyncService.storageFailure(StorageError.unavailable("database is locked")))
        #expect(transient.retryAfterMilliseconds != nil)
    }
}
