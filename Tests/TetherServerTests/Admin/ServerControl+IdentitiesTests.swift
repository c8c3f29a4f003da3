import Foundation
import HTTPTypes
import Testing
import TetherProtocol
@testable import TetherServer

/// The operator's side of enrollment over an in-memory identity role: keys minted and kept as
/// digests, devices tagged, rotated, revoked and removed with their sessions told, every
/// change audited, and each refusal with its status and hint.
@Suite struct ServerControlIdentitiesTests {
    @Test func aCreatedKeyIsShownOnceAndKeptAsItsDigest() async throws {
        try await IdentityFixture.with { f in
            let created = try await f.control.createEnrollmentKey(
                AdminAPI.EnrollmentKeyCreate(tags: ["store": "17"], uses: 3, expiresSeconds: 86400, note: "shop 17"), actor: "admin")
            let text = try #require(EnrollmentKeyText(parsing: created.key))
            #expect(text.keyID == created.enrollmentKey.id)
            let stored = try #require(f.identities.snapshot.keys[text.keyID])
            #expect(stored.digest == IdentitySecrets.digest(text.secret))
            #expect(stored.tags == ["store": "17"] && stored.usesAllowed == 3 && stored.note == "shop 17" && stored.createdBy == "admin")
            #expect(stored.expiresAt == f.clock.date + 86400)
            #expect(created.enrollmentKey.state == "active")
            let audit = f.identities.snapshot.audit
            #expect(audit.map(\.action) == ["enroll-key.create"] && audit[0].subject == text.keyID && audit[0].actor == "admin")
            #expect(!audit[0].detail.contains(text.secret), "the audit never carries the secret")
            // Listed without the secret.
            let listed = try await f.control.enrollmentKeys()
            #expect(listed.keys.map(\.id) == [text.keyID])
            let json = String(decoding: try JSONEncoder().encode(listed), as: UTF8.self)
            #expect(!json.contains(text.secret))
        }
    }

    @Test func keyDefaultsAndStates() async throws {
        try await IdentityFixture.with { f in
            let one = try await f.control.createEnrollmentKey(AdminAPI.EnrollmentKeyCreate(), actor: "console")
            #expect(one.enrollmentKey.usesAllowed == 1 && one.enrollmentKey.expiresAt == nil && one.enrollmentKey.createdBy == "console")
            let reusable = try await f.control.createEnrollmentKey(AdminAPI.EnrollmentKeyCreate(reusable: true, expiresSeconds: 60), actor: "admin")
            #expect(reusable.enrollmentKey.usesAllowed == nil)
            f.clock.advance(61)
            let states = Dictionary(uniqueKeysWithValues: try await f.control.enrollmentKeys().keys.map { ($0.id, $0.state) })
            #expect(states[reusable.enrollmentKey.id] == "expired" && states[one.enrollmentKey.id] == "active")
            var spent = try #require(f.identities.snapshot.keys[one.enrollmentKey.id])
            spent.usesSpent = 1
            #expect(AdminAPI.EnrollmentKey(spent, now: f.clock.date).state == "used-up")
        }
    }

    @Test func badKeyRequestsAreRefusedWithAHint() async throws {
        try await IdentityFixture.with { f in
            let bad: [AdminAPI.EnrollmentKeyCreate] = [
                .init(tags: ["Store": "1"]), .init(tags: ["store": "a b"]), .init(uses: 2, reusable: true), .init(uses: 0),
                .init(uses: 2_000_000), .init(expiresSeconds: 0), .init(expiresSeconds: 400 * 86400 * 30), .init(note: "two\nlines"),
                .init(note: String(repeating: "n", count: 300)),
                .init(tags: Dictionary(uniqueKeysWithValues: (0..<17).map { ("k\($0)", "v") })),
            ]
            for request in bad {
                let error = await refusal { try await f.control.createEnrollmentKey(request, actor: "admin") }
                #expect(error?.status == .badRequest && error?.hint != nil, "\(request)")
            }
            #expect(f.identities.snapshot.keys.isEmpty && f.identities.snapshot.audit.isEmpty, "nothing written")
        }
    }

    @Test func aKeyIsRevokedOnceAndAnUnknownOneIsNotFound() async throws {
        try await IdentityFixture.with { f in
            let created = try await f.control.createEnrollmentKey(AdminAPI.EnrollmentKeyCreate(reusable: true), actor: "admin")
            let revoked = try await f.control.revokeEnrollmentKey(id: created.enrollmentKey.id, actor: "admin")
            #expect(revoked.state == "revoked" && f.identities.snapshot.keys[revoked.id]?.revokedAt == f.clock.date)
            #expect(await refusal { try await f.control.revokeEnrollmentKey(id: revoked.id, actor: "admin") }?.message == AdminError.keyRevoked(revoked.id).message)
            #expect(await refusal { try await f.control.revokeEnrollmentKey(id: "0000000000000000", actor: "admin") }?.message == AdminError.unknownKey("0000000000000000").message)
            #expect(f.identities.snapshot.audit.map(\.action) == ["enroll-key.create", "enroll-key.revoke"])
        }
    }

    @Test func identitiesPageEnrolledDevicesAndConfigUsersByName() async throws {
        try await IdentityFixture.with { f in
            for name in ["till-1", "till-2", "ant", "zed"] { f.enrolled(name, tags: ["store": "1"]) }
            var names: [String] = []
            var after: String? = nil
            repeat {
                let page = try await f.control.identities(after: after, limit: 2)
                #expect(page.identities.count <= 2)
                names += page.identities.map(\.name)
                after = page.nextAfter
            } while after != nil
            #expect(names == ["ant", "pos", "till-1", "till-2", "zed"])
            let pos = try await f.control.identity(named: "pos")
            #expect(pos.source == "config" && pos.deviceID == nil)
            let till = try await f.control.identity(named: "till-1")
            #expect(till.source == "enrolled" && till.credentialAgeSeconds == 3600 && till.tags == ["store": "1"] && till.state == "active")
            #expect(await refusal { try await f.control.identity(named: "nobody") }?.message == AdminError.unknownDevice("nobody").message)
            await #expect(throws: AdminError.self) { try await f.control.identities(after: nil, limit: 0) }
        }
    }

    @Test func tagsChangeAndTheDevicesSessionsBindAgain() async throws {
        try await IdentityFixture.with { f in
            f.enrolled("till-1", tags: ["store": "1", "region": "north"])
            await f.bind("till-1", connection: 1)
            await f.bind("pos", connection: 2)
            let change = try await f.control.tagDevice(
                "till-1", try TagEdit.parse(["store=2", "region=", "lane=a"]), actor: "admin")
            #expect(change.identity.tags == ["store": "2", "lane": "a"] && change.sessionsNotified == 1)
            #expect(f.identities.snapshot.devices.values.first?.tags == ["store": "2", "lane": "a"])
            let errors = f.received.all
            #expect(errors.keys.map(\.connection) == [1])
            #expect(errors.values.first?.code == .otherSessionError && errors.values.first?.retryAfterMilliseconds == 0)
            let audit = try #require(f.identities.snapshot.audit.last)
            #expect(audit.action == "device.tag" && audit.detail == "tags region=north,store=1 -> lane=a,store=2")
            await #expect(throws: AdminError.self) { try await f.control.tagDevice("till-1", TagEdit(set: ["Bad": "x"]), actor: "admin") }
            #expect(await refusal { try await f.control.tagDevice("pos", TagEdit(set: ["a": "b"]), actor: "admin") }?.message == AdminError.configuredUser("pos").message)
            #expect(await refusal { try await f.control.tagDevice("x", TagEdit(set: ["a": "b"]), actor: "admin") }?.message == AdminError.unknownDevice("x").message)
        }
    }

    @Test func rotationIsAskedForOnceAndKeepsTheCurrentCredential() async throws {
        try await IdentityFixture.with { f in
            let device = f.enrolled("till-1")
            let change = try await f.control.rotateDevice("till-1", actor: "console")
            #expect(change.identity.rotationPending && change.sessionsNotified == 0, "not connected: handed over at its next bind")
            let stored = try #require(f.identities.snapshot.devices[device.id])
            #expect(stored.credentialDigest == device.credentialDigest, "the current credential still works")
            #expect(stored.rotationRequestedAt != nil && stored.pendingDigests == [], "no secret is made until it can be handed over")
            let audit = try #require(f.identities.snapshot.audit.last)
            #expect(audit.action == "device.rotate" && audit.actor == "console" && audit.subject == "till-1")
            let audits = f.identities.snapshot.audit.count
            _ = try await f.control.rotateDevice("till-1", actor: "admin")
            #expect(f.identities.snapshot.audit.count == audits, "a rotation under way is left as it is")
        }
    }

    @Test func revokeEndsTheDevicesSessionsWith203AndKeepsItListed() async throws {
        try await IdentityFixture.with { f in
            let device = f.enrolled("till-1")
            await f.bind("till-1", connection: 1)
            await f.bind("till-1", partition: "shared", connection: 2)
            await f.bind("pos", connection: 3)
            let change = try await f.control.revokeDevice("till-1", actor: "admin")
            #expect(change.sessionsNotified == 2 && change.identity.state == "revoked")
            let errors = f.received.all
            #expect(Set(errors.keys.map(\.connection)) == [1, 2])
            #expect(errors.values.allSatisfy { $0.code == .badUserAuthentication })
            #expect(f.identities.snapshot.devices[device.id]?.revokedAt == f.clock.date)
            #expect(try await f.control.identity(named: "till-1").state == "revoked")
            #expect(await refusal { try await f.control.revokeDevice("till-1", actor: "admin") }?.message == AdminError.deviceRevoked("till-1").message)
            #expect(await refusal { try await f.control.rotateDevice("till-1", actor: "admin") }?.message == AdminError.deviceRevoked("till-1").message)
        }
    }

    @Test func removeForgetsTheDevice() async throws {
        try await IdentityFixture.with { f in
            let device = f.enrolled("till-1")
            await f.bind("till-1", connection: 1)
            let change = try await f.control.removeDevice("till-1", actor: "admin")
            #expect(change.identity.state == "removed" && change.sessionsNotified == 1)
            #expect(f.identities.snapshot.devices[device.id] == nil)
            #expect(await refusal { try await f.control.removeDevice("till-1", actor: "admin") }?.message == AdminError.unknownDevice("till-1").message)
            #expect(f.identities.snapshot.audit.map(\.action) == ["device.remove"])
        }
    }

    @Test func anotherInstancesRevocationAndTagChangeReachThisOnesSessions() async throws {
        try await IdentityFixture.with { f in
            let one = f.enrolled("till-1")
            let two = f.enrolled("till-2", tags: ["store": "1"])
            await f.bind("till-1", connection: 1)
            await f.bind("till-2", connection: 2)
            await f.bind("pos", connection: 3)
            // What the other instance wrote to the shared storage before it announced it.
            let audit = AuditRecord(at: f.clock.date, actor: "admin", action: "device.revoke", subject: "till-1", detail: "")
            try await f.identities.revokeDevice(id: one.id, at: f.clock.date, audit: audit)
            try await f.identities.setTags(deviceID: two.id, ["store": "2"], audit: audit)
            await f.control.apply(remote: [.deviceRevoked("till-1"), .deviceChanged("till-2")])
            let errors = f.received.all
            #expect(errors[SessionKey(connection: 1, session: 1)]?.code == .badUserAuthentication)
            #expect(errors[SessionKey(connection: 2, session: 1)]?.retryAfterMilliseconds == 0)
            #expect(errors[SessionKey(connection: 3, session: 1)] == nil)
        }
    }

    @Test func auditRecordsPageOldestFirst() async throws {
        try await IdentityFixture.with { f in
            for _ in 0..<5 { _ = try await f.control.createEnrollmentKey(AdminAPI.EnrollmentKeyCreate(), actor: "admin") }
            let first = try await f.control.auditRecords(after: 0, limit: 3)
            #expect(first.records.map(\.id) == [1, 2, 3] && first.nextAfter == 3)
            let rest = try await f.control.auditRecords(after: 3, limit: 3)
            #expect(rest.records.map(\.id) == [4, 5] && rest.nextAfter == nil)
            await #expect(throws: AdminError.self) { try await f.control.auditRecords(after: -1, limit: 3) }
        }
    }

    @Test func grantsTakeTagAndDeviceSubjects() async throws {
        try await IdentityFixture.with { f in
            f.enrolled("till-1")
            for subject in ["tag:store=17", "device:*", "pos", "till-1"] {
                let changed = try await f.control.grant(user: subject, pattern: "shared", access: .read)
                #expect(changed.user == subject)
            }
            for subject in ["tag:Store=1", "tag:store", "device:till-1", ""] {
                await #expect(throws: AdminError.self, "\(subject)") { try await f.control.grant(user: subject, pattern: "shared", access: .read) }
            }
            do {
                _ = try await f.control.grant(user: "ghost", pattern: "shared", access: .read)
                Issue.record("a grant to nobody was made")
            } catch let error as AdminError {
                #expect(error.status == .notFound && error.message.contains("enrolled device"))
            }
        }
    }

    @Test func theStorageWithoutIdentitiesAnswers503() async throws {
        try await IdentityFixture.with { f in
            var roles = f.control.storage
            roles.identity = IdentitiesNotKept()
            let control = ServerControl(
                service: SyncService(storage: roles, hub: SyncHub(), policy: f.control.policy, now: { Date() }, logger: f.control.logger),
                configuration: f.control.configuration, now: { Date() }, logger: f.control.logger)
            do {
                _ = try await control.enrollmentKeys()
                Issue.record("answered without identities")
            } catch let error as AdminError {
                #expect(error.status == .serviceUnavailable && error.hint != nil)
            }
            // Grants to users still work, and the console's device page still shows.
            #expect(try await control.grant(user: "pos", pattern: "shared", access: .read).user == "pos")
            #expect(try await control.enrolledDevice(id: IdentityFixture.deviceID("x")) == nil)
        }
    }
}

/// The admin error `body` throws; nil when it returns or throws another error.
func refusal<T>(_ body: () async throws -> T) async -> AdminError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? AdminError
    }
}
