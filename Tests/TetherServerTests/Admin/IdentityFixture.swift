import Foundation
import Logging
import Synchronization
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// A ``ServerControl`` over SQLite whose identity role is an ``InMemoryIdentities``, with one
/// `[[user]]` (`pos`) and a clock the test sets; devices bound in its hub record the errors
/// pushed to them.
struct IdentityFixture: Sendable {
    let dir: TemporaryDirectory
    let storage: SQLiteServerStorage
    let identities: InMemoryIdentities
    let control: ServerControl
    let clock: TestClock
    let received = Received()

    final class TestClock: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
        var date: Date { now.withLock { $0 } }
    }

    final class Received: Sendable {
        let errors = Mutex<[SessionKey: SyncError]>([:])
        var all: [SessionKey: SyncError] { errors.withLock { $0 } }
    }

    static func make() throws -> IdentityFixture {
        let dir = try TemporaryDirectory()
        let storage = try SQLiteServerStorage(directory: dir.path)
        let identities = InMemoryIdentities()
        var roles = StorageRoles(storage)
        roles.identity = identities
        let configuration = try ServerConfiguration.parse(toml: """
            admin_token_file = "/nonexistent/admin.token"
            [[user]]
            name = "pos"
            token_file = "/nonexistent/pos.token"
            """, file: "server.toml")
        let policy = ServerPolicy(
            users: UserDirectory(entries: [(name: "pos", token: "pos-token")]), adminToken: TokenDigest(token: "admin"),
            configuredGrants: configuration.grants, runtimeGrants: [], flags: ServerFlags(), configuredRecovery: true,
            schemas: SchemaRegistry(history: [SchemaRecord(schema: Schema(version: 1, tables: []), isBreaking: false, appliedAt: Date())]))
        let clock = TestClock()
        let service = SyncService(storage: roles, hub: SyncHub(), policy: policy, now: { clock.date }, logger: Logger(label: "test"))
        let control = ServerControl(service: service, configuration: configuration, now: { clock.date }, logger: Logger(label: "test"))
        return IdentityFixture(dir: dir, storage: storage, identities: identities, control: control, clock: clock)
    }

    /// Runs `body` with a new fixture, closed and removed after.
    static func with(_ body: (IdentityFixture) async throws -> Void) async throws {
        let fixture = try make()
        defer { fixture.dir.remove() }
        do {
            try await body(fixture)
        } catch {
            try? await fixture.storage.close()  // cleanup: the body's error is the one to report
            throw error
        }
        try await fixture.storage.close()
    }

    /// An enrolled device `name` with `tags`, created an hour before the clock.
    @discardableResult
    func enrolled(_ name: String, id: String? = nil, tags: [String: String] = [:]) -> DeviceIdentityRecord {
        let device = DeviceIdentityRecord(
            id: id ?? Self.deviceID(name), name: name, tags: tags,
            credentialDigest: IdentitySecrets.digest("secret-\(name)"), credentialIssuedAt: clock.date - 3600, createdAt: clock.date - 3600,
            enrolledWithKey: "00112233aabbccdd")
        identities.add(device)
        return device
    }

    /// A device id (32 hex digits) made from `name`.
    static func deviceID(_ name: String) -> String {
        IdentitySecrets.digest(name).prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// A session of `user` bound to `partition` on connection `connection`: as the enrolled
    /// device of that name, with its tags, when there is one.
    func bind(_ user: String, partition: String = "store-1", connection: UInt64) async {
        let key = SessionKey(connection: connection, session: 1)
        let received = self.received
        let device = identities.snapshot.devices.values.first { $0.name == user }
        let session = BoundSession(
            key: key, partition: PartitionName(partition)!, clientFile: Int64(connection), user: user, tokenDigest: TokenDigest(token: "t"),
            access: .readwrite, subject: device.map { AccessSubject.device(id: $0.id, name: $0.name, tags: $0.tags) },
            fail: { error in received.errors.withLock { $0[key] = error } })
        _ = await control.hub.reserve(session.clientFile, of: session.partition, for: key)
        _ = await control.hub.register(session)
    }
}
