import Foundation
import TetherProtocol

@testable import TetherServer

/// An identity role whose storage cannot answer: every call throws
/// ``StorageError/unavailable(_:)`` (the admin API answers 503 with a hint).
struct IdentitiesNotKept: IdentityStorage {
    static let missing = StorageError.unavailable("the storage cannot answer for enrolled devices")

    func createEnrollmentKey(_ key: EnrollmentKeyRecord, audit: AuditRecord) async throws { throw Self.missing }
    func enrollmentKeys() async throws -> [EnrollmentKeyRecord] { throw Self.missing }
    func revokeEnrollmentKey(id: String, at: Date, audit: AuditRecord) async throws { throw Self.missing }
    func enroll(
        keyID: String, deviceID: String, name: String,
        decide: @Sendable (EnrollmentKeyRecord?, DeviceIdentityRecord?, String?) -> EnrollmentDecision
    ) async throws -> EnrollmentDecision { throw Self.missing }
    func device(id: String) async throws -> DeviceIdentityRecord? { throw Self.missing }
    func device(named name: String) async throws -> DeviceIdentityRecord? { throw Self.missing }
    func devices(afterName: String?, limit: Int) async throws -> [DeviceIdentityRecord] { throw Self.missing }
    func deviceCount() async throws -> Int { throw Self.missing }
    func setTags(deviceID: String, _ tags: [String: String], audit: AuditRecord) async throws { throw Self.missing }
    func requestRotation(deviceID: String, at: Date, audit: AuditRecord) async throws { throw Self.missing }
    func addPendingCredential(deviceID: String, digest: [UInt8]) async throws { throw Self.missing }
    func completeRotation(deviceID: String, digest: [UInt8], at: Date, audit: AuditRecord) async throws -> Bool { throw Self.missing }
    func revokeDevice(id: String, at: Date, audit: AuditRecord) async throws { throw Self.missing }
    func removeDevice(id: String, audit: AuditRecord) async throws { throw Self.missing }
    func touchDevices(_ seen: [String: Date]) async throws { throw Self.missing }
    func auditRecords(afterID: Int64, limit: Int) async throws -> [AuditRecord] { throw Self.missing }
}
