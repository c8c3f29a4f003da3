import Foundation
import Logging
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// Who may bind what, decided by the sync service against a real SQLite storage: a revoke
/// that lands while a bind awaits the storage, the glob-grant cap, and a scrape that reads
/// nothing from the storage.
@Suite struct SyncServiceAdmissionTests {
    static let schema = SchemaRegistry(history: [SchemaRecord(schema: Schema(version: 1, tables: []), isBreaking: false, appliedAt: Date())])

    struct Fixture {
        let dir: TemporaryDirectory
        let storage: SQLiteServerStorage
        /// The integration role the service holds: stops in a registration when asked.
        let registration: PausingRegistration
        /// The heal role the service holds: answers heal chunks as a test scripts.
        let heals: ScriptedHeals
        let service: SyncService
        let control: ServerControl
    }

    static func fixture(grants: String, globCap: Int = 1000, schemas: SchemaRegistry = schema) async throws -> Fixture {
        let dir = try TemporaryDirectory()
        let storage = try SQLiteServerStorage(directory: dir.path)
        let registration = PausingRegistration(storage)
        let heals = ScriptedHeals(storage)
        var roles = StorageRoles(storage)
        roles.integration = registration
        roles.heal = heals
        let configuration = try ServerConfiguration.parse(toml: """
            admin_token_file = "/nonexistent/admin.token"
            [[user]]
            name = "pos"
            token_file = "/nonexistent/pos.token"
            \(grants)
            """, file: "server.toml")
        let policy = ServerPolicy(
            users: UserDirectory(entries: [(name: "pos", token: "pos-token")]), adminToken: TokenDigest(token: "admin"),
            configuredGrants: configuration.grants, runtimeGrants: [], flags: ServerFlags(), configuredRecovery: true, schemas: schemas)
        let hub = SyncHub()
        let service = SyncService(
            storage: roles, hub: hub, policy: policy, now: { Date() }, logger: Logger(label: "test"),
            globPartitionsPerUser: globCap)
        let control = ServerControl(
            service: service, configuration: configuration, now: { Date() }, logger: Logger(label: "test"))
        return Fixture(dir: dir, storage: storage, registration: registration, heals: heals, service: service, control: control)
    }

    static func bind(_ service: SyncService, _ partition: String, session: SessionID = 1, connection: UInt64 = 1) async -> SyncService.BindOutcome {
        await service.bind(
            BindRequest(session: session, partition: partition, token: "pos-token", identity: nil, schemaVersion: 1),
            key: SessionKey(connection: connection, session: session)) { _ in }
    }

    @Test func aRevokeWhileABindAwaitsTheStorageIsNotMissed() async throws {
        let fixture = try await Self.fixture(grants: "[[grant]]\nuser = \"pos\"\npartitions = [\"store-*\"]\naccess = \"readwrite\"")
        defer { fixture.dir.remove() }
        fixture.registration.pauseNextRegistration()
        async let outcome = Self.bind(fixture.service, "store-1")
        await fixture.registration.waitUntilPaused()
        // The bind checked its grant and registered its client file; its session is not in the hub yet.
        let revoked = try await fixture.control.grant(user: "pos", pattern: "store-*", access: nil)
        #expect(revoked.sessionsNotified == 0)
        fixture.registration.resume()
        guard case .rejected(let error) = await outcome else {
            Issue.record("the bind was accepted after its grant was revoked")
            return
        }
        #expect(error.code == .permissionDenied)
        #expect(await fixture.service.hub.bound().isEmpty, "no session is left bound")
    }

    @Test func globGrantsCreateAtMostTheCapOfPartitions() async throws {
        let fixture = try await Self.fixture(
            grants: """
                [[grant]]
                user = "pos"
                partitions = ["shop-*", "till-7"]
                access = "readwrite"
                """, globCap: 2)
        defer { fixture.dir.remove() }
        for (i, name) in ["shop-1", "shop-2"].enumerated() {
            guard case .accepted = await Self.bind(fixture.service, name, connection: UInt64(i + 1)) else {
                Issue.record("\(name) refused")
                return
            }
        }
        guard case .rejected(let error) = await Self.bind(fixture.service, "shop-3", connection: 10) else {
            Issue.record("a third partition through the glob was created")
            return
        }
        #expect(error.code == .permissionDenied)
        #expect(error.message.contains("glob_partitions_per_user = 2"))
        #expect(error.tokenAcceptedForTest)
        // Partitions that exist, and those granted by exact name, are never refused.
        guard case .accepted = await Self.bind(fixture.service, "shop-1", connection: 11),
            case .accepted = await Self.bind(fixture.service, "till-7", connection: 12)
        else {
            Issue.record("an existing or exactly granted partition was refused")
            return
        }
        #expect(try await fixture.storage.latestVersions().keys.sorted() == ["shop-1", "shop-2", "till-7"])
    }

    @Test func aScrapeReadsNothingFromTheStorage() async throws {
        let fixture = try await Self.fixture(grants: "[[grant]]\nuser = \"pos\"\npartitions = [\"store-*\"]\naccess = \"readwrite\"")
        defer { fixture.dir.remove() }
        guard case .accepted = await Self.bind(fixture.service, "store-9") else {
            Issue.record("bind refused")
            return
        }
        try await fixture.storage.close()
        // With the storage closed, the gauges still come from the in-memory summary.
        let text = fixture.service.metrics.exposition(await fixture.service.metricsSnapshot())
        #expect(text.contains(#"tether_server_partition_version{partition="store-9"} 0"#))
        #expect(text.contains("tether_server_bound_sessions 1"))
    }
}

extension SyncError {
    /// Whether a bind refused with this error still authenticated its connection.
    fileprivate var tokenAcceptedForTest: Bool { SyncService.BindOutcome.rejected(self).tokenAccepted }
}
