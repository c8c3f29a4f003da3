import Foundation

/// The storage by role, as the server's services hold it: ``SyncService`` keeps it and uses the
/// roles a bind, an upload, a heal chunk and a device report need, and gives it to
/// ``ServerControl`` (admin, heal, housekeeping, policy, ledger), ``SessionStreamer`` and
/// ``ReadyFileBuilder`` (history reading). ``init(_:)`` gives every role to one storage (the
/// app's wiring); a test replaces one role with a double of that role.
package struct StorageRoles: Sendable {
    package var policy: any PolicyStorage
    package var history: any HistoryReading
    package var integration: any IntegrationStorage
    package var heal: any HealStorage
    package var admin: any AdminStorage
    package var housekeeping: any HousekeepingStorage
    package var ledger: any DeviceLedgerStorage
    package var identity: any IdentityStorage

    /// Every role played by `storage`.
    package init(_ storage: any ServerStorage) {
        policy = storage
        history = storage
        integration = storage
        heal = storage
        admin = storage
        housekeeping = storage
        ledger = storage
        // Until both storages keep identities (issue 48), one that does not answers that it
        // does not (``IdentitiesNotKept``).
        identity = storage as? any IdentityStorage ?? IdentitiesNotKept()
    }
}

/// The identity role of a storage that does not keep identities: every call throws
/// ``StorageError/unavailable(_:)``.
struct IdentitiesNotKept: IdentityStorage {
    static let missing = StorageError.unavailable("this storage does not keep enrolled devices")

    func createEnrollmentKey(_ key: EnrollmentKeyRecord, audit: AuditRecord) async throws { throw Self.missing }
    func enrollmentKeys() async throws -> [EnrollmentKeyRecord] { throw Self.missing }
    func revokeEnrollmentKey(id: String, at: Date, audit: AuditRecord) async throws { throw Self.missing }
    func enroll(
        keyID: String, deviceID: String,
        decide: @Sendable (EnrollmentKeyRecord?, DeviceIdentityRecord?, String?) -> EnrollmentDecision
    ) async throws -> EnrollmentDecision { throw Self.missing }
    func device(id: String) async throws -> DeviceIdentityRecord? { throw Self.missing }
    func device(named name: String) async throws -> DeviceIdentityRecord? { throw Self.missing }
    func devices(afterName: String?, limit: Int) async throws -> [DeviceIdentityRecord] { throw Self.missing }
    func deviceCount() async throws -> Int { throw Self.missing }
    func setTags(deviceID: String, _ tags: [String: String], audit: AuditRecord) async throws { throw Self.missing }
    func beginRotation(deviceID: String, pendingDigest: [UInt8], at: Date, audit: AuditRecord) async throws { throw Self.missing }
    func completeRotation(deviceID: String, digest: [UInt8], at: Date) async throws -> Bool { throw Self.missing }
    func revokeDevice(id: String, at: Date, audit: AuditRecord) async throws { throw Self.missing }
    func removeDevice(id: String, audit: AuditRecord) async throws { throw Self.missing }
    func touchDevices(_ seen: [String: Date]) async throws { throw Self.missing }
    func auditRecords(afterID: Int64, limit: Int) async throws -> [AuditRecord] { throw Self.missing }
}
