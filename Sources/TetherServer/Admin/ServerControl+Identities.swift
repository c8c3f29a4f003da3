import Foundation
import Logging
import TetherProtocol

/// The operator's side of enrollment (docs/server.md "Enrollment: keys, devices, audit"): enrollment keys, enrolled
/// devices (tags, rotation, revocation, removal) and the audit trail, over
/// ``StorageRoles/identity``. `actor` is who asked (`admin` for the admin token, `console` for
/// the web console); every change is written with its ``AuditRecord`` and logged in one line
/// that never carries a secret.
extension ServerControl {
    static let maxKeyUses = 1_000_000
    /// Ten years: a longer expiry is a typing error more likely than a plan.
    static let maxKeyLifetimeSeconds = 10 * 366 * 86400
    static let maxNoteBytes = 256
    static let maxPageSize = 1000

    // MARK: Enrollment keys

    /// Mints a key, keeps its digest, and answers its text: the only time it is shown.
    package func createEnrollmentKey(_ request: AdminAPI.EnrollmentKeyCreate, actor: String) async throws -> AdminAPI.EnrollmentKeyCreated {
        let at = now()
        let text = IdentitySecrets.newEnrollmentKey()
        let record = try Self.enrollmentKey(request, id: text.keyID, digest: IdentitySecrets.digest(text.secret), at: at, actor: actor)
        let audit = AuditRecord(at: at, actor: actor, action: "enroll-key.create", subject: record.id, detail: Self.describe(record))
        try await withIdentities { try await $0.createEnrollmentKey(record, audit: audit) }
        logger.notice("enrollment key created", metadata: [
            "key": "\(record.id)", "tags": "\(TagEdit.describe(record.tags))", "uses": "\(record.usesAllowed.map { "\($0)" } ?? "reusable")",
            "expires": "\(record.expiresAt.map(AdminAPI.Device.timestamp) ?? "never")", "actor": "\(actor)",
        ])
        return AdminAPI.EnrollmentKeyCreated(key: text.text, enrollmentKey: AdminAPI.EnrollmentKey(record, now: at))
    }

    /// The key a create request describes (pure), or why it cannot be made.
    static func enrollmentKey(
        _ request: AdminAPI.EnrollmentKeyCreate, id: String, digest: [UInt8], at: Date, actor: String
    ) throws(AdminError) -> EnrollmentKeyRecord {
        do throws(TagProblem) {
            _ = try TagEdit(set: request.tags).validated()
        } catch {
            throw AdminError.badTag(error)
        }
        if request.reusable, request.uses != nil {
            throw AdminError.badKeyRequest("a key is either reusable or of N uses, not both", hint: "give --uses N or --reusable")
        }
        if let uses = request.uses, !(1...maxKeyUses).contains(uses) {
            throw AdminError.badKeyRequest("uses must be 1 to \(maxKeyUses), not \(uses)", hint: "a key for more devices is --reusable")
        }
        if let seconds = request.expiresSeconds, !(1...maxKeyLifetimeSeconds).contains(seconds) {
            throw AdminError.badKeyRequest(
                "a key expires 1 second to 10 years after it is made, not \(seconds) seconds", hint: "--expires takes 90s, 30m, 24h or 7d")
        }
        guard request.note.utf8.count <= maxNoteBytes, !request.note.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw AdminError.badKeyRequest("the note is longer than \(maxNoteBytes) bytes or has control characters", hint: "a note is one short line")
        }
        return EnrollmentKeyRecord(
            id: id, digest: digest, tags: request.tags, usesAllowed: request.reusable ? nil : request.uses ?? 1,
            expiresAt: request.expiresSeconds.map { at.addingTimeInterval(TimeInterval($0)) }, note: request.note, createdAt: at, createdBy: actor)
    }

    /// Every key, newest first.
    package func enrollmentKeys() async throws -> AdminAPI.EnrollmentKeys {
        let at = now()
        let keys = try await withIdentities { try await $0.enrollmentKeys() }
        return AdminAPI.EnrollmentKeys(keys: keys.map { AdminAPI.EnrollmentKey($0, now: at) }, at: AdminAPI.Device.timestamp(at))
    }

    /// Stops the key from enrolling more devices; those it enrolled keep working.
    package func revokeEnrollmentKey(id: String, actor: String) async throws -> AdminAPI.EnrollmentKey {
        let at = now()
        guard var key = try await withIdentities({ try await $0.enrollmentKeys() }).first(where: { $0.id == id }) else {
            throw AdminError.unknownKey(id)
        }
        guard key.revokedAt == nil else { throw AdminError.keyRevoked(id) }
        let audit = AuditRecord(
            at: at, actor: actor, action: "enroll-key.revoke", subject: id, detail: "revoked after \(key.usesSpent) enrollments")
        do {
            try await withIdentities { try await $0.revokeEnrollmentKey(id: id, at: at, audit: audit) }
        } catch StorageError.notFound {
            throw AdminError.unknownKey(id)
        }
        logger.notice("enrollment key revoked", metadata: ["key": "\(id)", "actor": "\(actor)"])
        key.revokedAt = at
        return AdminAPI.EnrollmentKey(key, now: at)
    }

    // MARK: Devices

    /// A page of identities in name order: enrolled devices and the config file's `[[user]]`s.
    package func identities(after: String?, limit: Int) async throws -> AdminAPI.Identities {
        guard (1...Self.maxPageSize).contains(limit) else { throw AdminError.badPage("limit must be 1 to \(Self.maxPageSize)") }
        let at = now()
        let enrolled = try await withIdentities { try await $0.devices(afterName: after, limit: limit + 1) }
        let configured = await policy.snapshot.users.entries.map(\.name)
        return Self.identityPage(enrolled: enrolled, configured: configured, after: after, limit: limit, now: at)
    }

    /// One page of the merged, name-ordered list (pure): `enrolled` as the storage gave it (in
    /// name order after `after`), `configured` in any order.
    static func identityPage(
        enrolled: [DeviceIdentityRecord], configured: [String], after: String?, limit: Int, now: Date
    ) -> AdminAPI.Identities {
        let users = configured.filter { name in after.map { name > $0 } ?? true }.map(AdminAPI.Identity.init(configUser:))
        let merged = (enrolled.map { AdminAPI.Identity($0, now: now) } + users).sorted { ($0.name, $0.source) < ($1.name, $1.source) }
        let page = Array(merged.prefix(limit))
        return AdminAPI.Identities(
            identities: page, nextAfter: merged.count > limit ? page.last?.name : nil, at: AdminAPI.Device.timestamp(now))
    }

    /// One identity by name: an enrolled device, else a `[[user]]`.
    package func identity(named name: String) async throws -> AdminAPI.Identity {
        if let device = try await withIdentities({ try await $0.device(named: name) }) { return AdminAPI.Identity(device, now: now()) }
        if await policy.snapshot.users.contains(user: name) { return AdminAPI.Identity(configUser: name) }
        throw AdminError.unknownDevice(name)
    }

    /// Applies `edit` to the device's tags; its bound sessions bind again, so grants by tag follow.
    package func tagDevice(_ name: String, _ edit: TagEdit, actor: String) async throws -> AdminAPI.IdentityChanged {
        var device = try await enrolledDevice(named: name)
        let tags: [String: String]
        do throws(TagProblem) {
            tags = try edit.validated().applied(to: device.tags)
        } catch {
            throw AdminError.badTag(error)
        }
        let at = now()
        let audit = AuditRecord(
            at: at, actor: actor, action: "device.tag", subject: name, detail: "tags \(TagEdit.describe(device.tags)) -> \(TagEdit.describe(tags))")
        try await changing(name) { try await $0.setTags(deviceID: device.id, tags, audit: audit) }
        logger.notice("device tags changed", metadata: ["device": "\(name)", "tags": "\(TagEdit.describe(tags))", "actor": "\(actor)"])
        device.tags = tags
        await bus?.announce(.deviceChanged(name))
        // This instance's cached credential goes, and the device's sessions bind again.
        let notified = await service.deviceChanged(device.id)
        return AdminAPI.IdentityChanged(identity: AdminAPI.Identity(device, now: at), sessionsNotified: notified)
    }

    /// Marks the device due a new credential, handed to it over its sync connection now (here,
    /// or by the instance it is connected to) or at its next bind; the current one works until
    /// the device shows it holds the new one (docs/server.md "Rotation"). A rotation already
    /// under way is left as it is.
    package func rotateDevice(_ name: String, actor: String) async throws -> AdminAPI.IdentityChanged {
        var device = try await enrolledDevice(named: name)
        guard device.revokedAt == nil else { throw AdminError.deviceRevoked(name) }
        let at = now()
        guard !device.rotationPending else {
            return AdminAPI.IdentityChanged(identity: AdminAPI.Identity(device, now: at), sessionsNotified: 0)
        }
        let audit = AuditRecord(
            at: at, actor: actor, action: "device.rotate", subject: name,
            detail: "new credential asked for; the current one works until the device confirms the new one")
        try await changing(name) { try await $0.requestRotation(deviceID: device.id, at: at, audit: audit) }
        logger.notice("device credential rotation begun", metadata: ["device": "\(name)", "actor": "\(actor)"])
        device.rotationRequestedAt = at
        await bus?.announce(.deviceChanged(name))
        service.deviceCredentials.invalidate(deviceID: device.id)
        let handed = await service.offerCredential(toDevice: device.id)
        return AdminAPI.IdentityChanged(identity: AdminAPI.Identity(device, now: at), sessionsNotified: handed)
    }

    /// Revokes the device: its credentials stop working and its bound sessions end (203).
    package func revokeDevice(_ name: String, actor: String) async throws -> AdminAPI.IdentityChanged {
        var device = try await enrolledDevice(named: name)
        guard device.revokedAt == nil else { throw AdminError.deviceRevoked(name) }
        let at = now()
        let audit = AuditRecord(at: at, actor: actor, action: "device.revoke", subject: name, detail: "device \(device.id) revoked")
        try await changing(name) { try await $0.revokeDevice(id: device.id, at: at, audit: audit) }
        logger.notice("device revoked", metadata: ["device": "\(name)", "device_id": "\(device.id)", "actor": "\(actor)"])
        device.revokedAt = at
        device.pendingDigests = []
        device.rotationRequestedAt = nil
        await bus?.announce(.deviceRevoked(name))
        // This instance's cached credential goes, and the device's sessions end (203).
        let notified = await service.deviceChanged(device.id)
        return AdminAPI.IdentityChanged(identity: AdminAPI.Identity(device, now: at), sessionsNotified: notified)
    }

    /// Forgets the device (its id may enroll again); its bound sessions end (203).
    package func removeDevice(_ name: String, actor: String) async throws -> AdminAPI.IdentityChanged {
        let device = try await enrolledDevice(named: name)
        let at = now()
        let audit = AuditRecord(at: at, actor: actor, action: "device.remove", subject: name, detail: "device \(device.id) forgotten")
        try await changing(name) { try await $0.removeDevice(id: device.id, audit: audit) }
        logger.notice("device removed", metadata: ["device": "\(name)", "device_id": "\(device.id)", "actor": "\(actor)"])
        var identity = AdminAPI.Identity(device, now: at)
        identity.state = "removed"
        await bus?.announce(.deviceRevoked(name))
        return AdminAPI.IdentityChanged(identity: identity, sessionsNotified: await service.deviceChanged(device.id))
    }

    // MARK: Audit

    /// Audit records after `after`, oldest first.
    package func auditRecords(after: Int64, limit: Int) async throws -> AdminAPI.Audit {
        guard (1...Self.maxPageSize).contains(limit) else { throw AdminError.badPage("limit must be 1 to \(Self.maxPageSize)") }
        guard after >= 0 else { throw AdminError.badPage("after must be 0 or more") }
        let records = try await withIdentities { try await $0.auditRecords(afterID: after, limit: limit) }
        return AdminAPI.Audit(records: records.map(AdminAPI.AuditEntry.init), nextAfter: records.count == limit ? records.last?.id : nil)
    }

    // MARK: Helpers

    /// The enrolled device named `name`; a `[[user]]` or an unknown name is refused.
    func enrolledDevice(named name: String) async throws -> DeviceIdentityRecord {
        if let device = try await withIdentities({ try await $0.device(named: name) }) { return device }
        if await policy.snapshot.users.contains(user: name) { throw AdminError.configuredUser(name) }
        throw AdminError.unknownDevice(name)
    }

    /// The enrolled device with this id; nil when there is none or the storage keeps no identities.
    func enrolledDevice(id: String) async throws -> DeviceIdentityRecord? {
        do {
            return try await storage.identity.device(id: id)
        } catch StorageError.unavailable {
            return nil
        }
    }

    /// Whether `name` is an enrolled device's (false when the storage keeps no identities).
    func isEnrolledName(_ name: String) async throws -> Bool {
        do {
            return try await storage.identity.device(named: name) != nil
        } catch StorageError.unavailable {
            return false
        }
    }

    /// Calls the identity role; its unavailability is a 503 with a hint.
    func withIdentities<T>(_ body: (any IdentityStorage) async throws -> T) async throws -> T {
        do {
            return try await body(storage.identity)
        } catch let error as StorageError {
            if case .unavailable = error { throw AdminError.identitiesUnavailable(error) }
            throw error
        }
    }

    /// A write to a device found a moment ago: gone since, it is unknown.
    private func changing(_ name: String, _ body: (any IdentityStorage) async throws -> Void) async throws {
        do {
            try await withIdentities(body)
        } catch StorageError.notFound {
            throw AdminError.unknownDevice(name)
        }
    }

    /// An enrollment key in words for its audit record (never its secret).
    static func describe(_ key: EnrollmentKeyRecord) -> String {
        var parts = ["tags \(TagEdit.describe(key.tags))", key.usesAllowed.map { "\($0) use\($0 == 1 ? "" : "s")" } ?? "reusable"]
        parts.append(key.expiresAt.map { "expires \(AdminAPI.Device.timestamp($0))" } ?? "does not expire")
        if !key.note.isEmpty { parts.append("note \(key.note.debugDescription)") }
        return parts.joined(separator: "; ")
    }
}
