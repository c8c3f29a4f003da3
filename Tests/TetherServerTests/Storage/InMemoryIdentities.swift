import Foundation
import Synchronization
import TetherProtocol
@testable import TetherServer

/// The identity role in memory: keys, devices and audit records as the storages keep them
/// (audit ids from 1, every change with its audit record), for tests of what uses the role.
/// ``enroll(keyID:deviceID:decide:)`` writes what the decision says, as a storage would.
final class InMemoryIdentities: IdentityStorage {
    struct State {
        var keys: [String: EnrollmentKeyRecord] = [:]
        var devices: [String: DeviceIdentityRecord] = [:]
        var audit: [AuditRecord] = []
    }

    private let state = Mutex(State())

    init() {}

    /// A device as if it had enrolled (no audit record).
    func add(_ device: DeviceIdentityRecord) { state.withLock { $0.devices[device.id] = device } }

    var snapshot: State { state.withLock { $0 } }

    private func write(_ audit: AuditRecord, _ change: (inout State) throws -> Void) throws {
        try state.withLock { state in
            try change(&state)
            var record = audit
            record.id = Int64(state.audit.count + 1)
            state.audit.append(record)
        }
    }

    func createEnrollmentKey(_ key: EnrollmentKeyRecord, audit: AuditRecord) async throws {
        try write(audit) { $0.keys[key.id] = key }
    }

    func enrollmentKeys() async throws -> [EnrollmentKeyRecord] {
        state.withLock { $0.keys.values.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) } }
    }

    func revokeEnrollmentKey(id: String, at: Date, audit: AuditRecord) async throws {
        try write(audit) { state in
            guard state.keys[id] != nil else { throw StorageError.notFound("enrollment key \(id)") }
            state.keys[id]?.revokedAt = at
        }
    }

    func enroll(
        keyID: String, deviceID: String, name: String,
        decide: @Sendable (EnrollmentKeyRecord?, DeviceIdentityRecord?, String?) -> EnrollmentDecision
    ) async throws -> EnrollmentDecision {
        state.withLock { state in
            let decision = decide(state.keys[keyID], state.devices[deviceID], state.devices.values.first { $0.name == name }?.id)
            switch decision {
            case .enroll(let device, let audit):
                state.devices[device.id] = device
                state.keys[keyID]?.usesSpent += 1
                state.audit.append(AuditRecord(id: Int64(state.audit.count + 1), at: audit.at, actor: audit.actor, action: audit.action, subject: audit.subject, detail: audit.detail))
            case .reenroll(let device, let audit):
                state.devices[device.id] = device
                state.audit.append(AuditRecord(id: Int64(state.audit.count + 1), at: audit.at, actor: audit.actor, action: audit.action, subject: audit.subject, detail: audit.detail))
            case .refuse: break
            }
            return decision
        }
    }

    func device(id: String) async throws -> DeviceIdentityRecord? { state.withLock { $0.devices[id] } }

    func device(named name: String) async throws -> DeviceIdentityRecord? {
        state.withLock { $0.devices.values.first { $0.name == name } }
    }

    func devices(afterName: String?, limit: Int) async throws -> [DeviceIdentityRecord] {
        state.withLock { state in
            Array(state.devices.values.filter { d in afterName.map { d.name > $0 } ?? true }.sorted { $0.name < $1.name }.prefix(limit))
        }
    }

    func deviceCount() async throws -> Int { state.withLock { $0.devices.count } }

    func setTags(deviceID: String, _ tags: [String: String], audit: AuditRecord) async throws {
        try write(audit) { state in
            guard state.devices[deviceID] != nil else { throw StorageError.notFound("device \(deviceID)") }
            state.devices[deviceID]?.tags = tags
        }
    }

    func requestRotation(deviceID: String, at: Date, audit: AuditRecord) async throws {
        try write(audit) { state in
            guard state.devices[deviceID] != nil else { throw StorageError.notFound("device \(deviceID)") }
            if state.devices[deviceID]?.rotationRequestedAt == nil { state.devices[deviceID]?.rotationRequestedAt = at }
        }
    }

    func addPendingCredential(deviceID: String, digest: [UInt8]) async throws {
        try state.withLock { state in
            guard let device = state.devices[deviceID] else { throw StorageError.notFound("device \(deviceID)") }
            state.devices[deviceID]?.pendingDigests = device.addingPending(digest)
        }
    }

    func completeRotation(deviceID: String, digest: [UInt8], at: Date, audit: AuditRecord) async throws -> Bool {
        let pending = state.withLock { state in
            state.devices[deviceID].map { $0.revokedAt == nil && $0.pendingDigests.contains(digest) } ?? false
        }
        guard pending else { return false }
        try write(audit) { state in
            state.devices[deviceID]?.credentialDigest = digest
            state.devices[deviceID]?.pendingDigests = []
            state.devices[deviceID]?.rotationRequestedAt = nil
            state.devices[deviceID]?.credentialIssuedAt = at
        }
        return true
    }

    func revokeDevice(id: String, at: Date, audit: AuditRecord) async throws {
        try write(audit) { state in
            guard state.devices[id] != nil else { throw StorageError.notFound("device \(id)") }
            state.devices[id]?.revokedAt = at
            state.devices[id]?.pendingDigests = []
            state.devices[id]?.rotationRequestedAt = nil
        }
    }

    func removeDevice(id: String, audit: AuditRecord) async throws {
        try write(audit) { state in
            guard state.devices.removeValue(forKey: id) != nil else { throw StorageError.notFound("device \(id)") }
        }
    }

    func touchDevices(_ seen: [String: Date]) async throws {
        state.withLock { state in
            for (id, at) in seen where state.devices[id] != nil { state.devices[id]?.lastSeenAt = at }
        }
    }

    func auditRecords(afterID: Int64, limit: Int) async throws -> [AuditRecord] {
        state.withLock { Array($0.audit.filter { $0.id > afterID }.prefix(limit)) }
    }
}
