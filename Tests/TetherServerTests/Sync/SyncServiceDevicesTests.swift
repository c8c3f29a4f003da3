import Foundation
import Logging
import Synchronization
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// Enrolled devices at the sync service, on a real SQLite storage: enrollment through
/// ``EnrollmentService``, binds and reports with the device credential it answers, grants by tag
/// and template, and a device's change (revoked, tagged) reaching its bound sessions.
@Suite struct SyncServiceDevicesTests {
    static let deviceID = "0123456789abcdef0123456789abcdef"

    struct Fixture: Sendable {
        let dir: TemporaryDirectory
        let storage: SQLiteServerStorage
        let service: SyncService
        let enrollment: EnrollmentService
        let key: EnrollmentKeyText
    }

    static func fixture(uses: Int? = nil) async throws -> Fixture {
        let dir = try TemporaryDirectory()
        let storage = try SQLiteServerStorage(directory: dir.path)
        let grants = [
            RuntimeGrant(user: "tag:store=17", pattern: try GrantPattern.parse("store-{tag:store}").get(), access: .readwrite),
            RuntimeGrant(user: "device:*", pattern: try GrantPattern.parse("shared").get(), access: .read),
            RuntimeGrant(user: "pos", pattern: try GrantPattern.parse("store-*").get(), access: .readwrite),
        ]
        let policy = ServerPolicy(
            users: UserDirectory(entries: [(name: "pos", token: "pos-token")]), adminToken: TokenDigest(token: "admin"),
            configuredGrants: [], runtimeGrants: grants, flags: ServerFlags(), configuredRecovery: true,
            schemas: SyncServiceAdmissionTests.schema)
        let service = SyncService(storage: StorageRoles(storage), hub: SyncHub(), policy: policy, now: { Date() }, logger: Logger(label: "test"))
        let enrollment = EnrollmentService(
            identity: storage, policy: policy, now: { Date() }, logger: Logger(label: "test"), changed: { await service.deviceChanged($0.id) })
        let (key, digest) = CredentialMinter.enrollmentKey()
        try await storage.createEnrollmentKey(
            EnrollmentKeyRecord(
                id: key.keyID, digest: digest, tags: ["store": "17"], usesAllowed: uses, expiresAt: nil, note: "", createdAt: Date(),
                createdBy: "admin"),
            audit: AuditRecord(at: Date(), actor: "admin", action: "enroll-key.create", subject: key.keyID, detail: ""))
        return Fixture(dir: dir, storage: storage, service: service, enrollment: enrollment, key: key)
    }

    static func enroll(_ fixture: Fixture, device: String = SyncServiceDevicesTests.deviceID, name: String? = "till-1") async -> EnrollmentService.Outcome {
        await fixture.enrollment.enroll(
            EnrollmentRequest(key: fixture.key.text, deviceID: device, name: name, release: "0.9.0"), peer: "192.0.2.1")
    }

    static func credential(_ outcome: EnrollmentService.Outcome) -> String? {
        if case .enrolled(let response, _) = outcome { return response.credential }
        return nil
    }

    /// Errors pushed to sessions, in order.
    final class Pushed: Sendable {
        let errors = Mutex<[SyncError]>([])
        var codes: [SyncErrorCode] { errors.withLock { $0.map(\.code) } }
    }

    static func bind(
        _ service: SyncService, _ partition: String, token: String, session: SessionID = 1, pushed: Pushed = Pushed()
    ) async -> SyncService.BindOutcome {
        await service.bind(
            BindRequest(session: session, partition: partition, token: token, identity: nil, schemaVersion: 1),
            key: SessionKey(connection: 1, session: session)) { error in pushed.errors.withLock { $0.append(error) } }
    }

    static func access(_ outcome: SyncService.BindOutcome) -> PartitionAccess? {
        if case .accepted(let reply, _, _, _, _) = outcome { return reply.access }
        return nil
    }

    static func refusal(_ outcome: SyncService.BindOutcome) -> SyncErrorCode? {
        if case .rejected(let error) = outcome { return error.code }
        return nil
    }

    @Test func anEnrolledDeviceBindsWhatItsTagsAndTemplatesGrant() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.dir.remove() }
        let outcome = await Self.enroll(fixture)
        #expect(outcome.httpStatus == 201)
        let token = try #require(Self.credential(outcome))
        #expect(Self.access(await Self.bind(fixture.service, "store-17", token: token, session: 1)) == .readwrite)
        #expect(Self.access(await Self.bind(fixture.service, "shared", token: token, session: 2)) == .read)
        #expect(Self.refusal(await Self.bind(fixture.service, "store-18", token: token, session: 3)) == .permissionDenied)
        let bound = await fixture.service.hub.bound()
        #expect(bound.map(\.user) == ["till-1", "till-1"] && bound.allSatisfy { $0.subject.deviceID == Self.deviceID })
        // A wrong secret for the same device is refused as a bad token; the [[user]] token works as before.
        let forged = DeviceCredential(deviceID: Self.deviceID, secret: CredentialMinter.newSecret()).text
        let refused = await Self.bind(fixture.service, "store-17", token: forged, session: 4)
        #expect(Self.refusal(refused) == .badUserAuthentication && !refused.tokenAccepted)
        #expect(Self.access(await Self.bind(fixture.service, "store-18", token: "pos-token", session: 5)) == .readwrite)
        // Binds are noted, and written in one batch.
        try await fixture.service.deviceCredentials.flushSeen()
        #expect(try await fixture.storage.device(id: Self.deviceID)?.lastSeenAt != nil)
    }

    @Test func reEnrollingReplacesTheCredential() async throws {
        let fixture = try await Self.fixture(uses: 1)
        defer { fixture.dir.remove() }
        let first = try #require(Self.credential(await Self.enroll(fixture)))
        #expect(Self.access(await Self.bind(fixture.service, "shared", token: first, session: 1)) == .read)
        let again = await Self.enroll(fixture)
        #expect(again.httpStatus == 200)
        let second = try #require(Self.credential(again))
        #expect(second != first)
        #expect(Self.refusal(await Self.bind(fixture.service, "shared", token: first, session: 2)) == .badUserAuthentication)
        #expect(Self.access(await Self.bind(fixture.service, "shared", token: second, session: 3)) == .read)
        // The single use is spent once: another device is refused.
        let other = await Self.enroll(fixture, device: "fedcba9876543210fedcba9876543210", name: nil)
        #expect(other == .refused(EnrollmentFailure(.usedUpKey, "enrollment key \(fixture.key.keyID) has enrolled its 1 device")))
    }

    @Test func aRevokedDevicesSessionsEndWith203AndItsBindsAreRefused() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.dir.remove() }
        let token = try #require(Self.credential(await Self.enroll(fixture)))
        let pushed = Pushed()
        #expect(Self.access(await Self.bind(fixture.service, "store-17", token: token, pushed: pushed)) == .readwrite)
        try await fixture.storage.revokeDevice(
            id: Self.deviceID, at: Date(), audit: AuditRecord(at: Date(), actor: "admin", action: "device.revoke", subject: "till-1", detail: ""))
        // As another instance announces it: by the device's name.
        #expect(await fixture.service.deviceChanged(named: "till-1") == 1)
        #expect(pushed.codes == [.badUserAuthentication])
        #expect(Self.refusal(await Self.bind(fixture.service, "store-17", token: token, session: 2)) == .badUserAuthentication)
    }

    @Test func aTagChangeMakesTheDevicesSessionsBindAgain() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.dir.remove() }
        let token = try #require(Self.credential(await Self.enroll(fixture)))
        let pushed = Pushed()
        #expect(Self.access(await Self.bind(fixture.service, "store-17", token: token, pushed: pushed)) == .readwrite)
        // A cached credential still answers until the change is announced: then the new tags count.
        try await fixture.storage.setTags(
            deviceID: Self.deviceID, ["store": "18"],
            audit: AuditRecord(at: Date(), actor: "admin", action: "device.tag", subject: "till-1", detail: ""))
        #expect(await fixture.service.deviceChanged(Self.deviceID) == 1)
        #expect(pushed.codes == [.otherSessionError])
        await fixture.service.release(SessionKey(connection: 1, session: 1))
        #expect(Self.refusal(await Self.bind(fixture.service, "store-17", token: token, session: 2)) == .permissionDenied)
    }

    @Test func aDevicesReportMustNameItsOwnDevice() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.dir.remove() }
        let token = try #require(Self.credential(await Self.enroll(fixture)))
        func report(_ device: String) -> DeviceReport {
            DeviceReport(
                token: token, deviceID: device, deviceName: "till-1", release: "0.9.0",
                entries: [DeviceReport.Entry(partition: "shared", state: "synced", clientFile: 1)])
        }
        #expect(await fixture.service.recordReport(report("fedcba9876543210fedcba9876543210")).user == nil)
        #expect(await fixture.service.recordReport(report(Self.deviceID)).user == "till-1")
    }
}
