import Foundation
import Synchronization
import TetherProtocol

/// Authenticates device credentials (`tdc1.<device id>.<secret>`, issue 48) for binds and
/// device reports: looks the device up by the id in the credential and compares the secret's
/// digest with its current and pending ones in constant time (``SecretDigest``). Identity
/// records are cached per instance; a change to a device (revoked, removed, tagged, rotated —
/// here, or on another instance through the cluster bus) drops its entry
/// (``invalidate(deviceID:)``), and a read that raced a drop is not cached. Binds note when each
/// device was seen; ``flushSeen()`` writes them in one batch.
package final class DeviceCredentials: Sendable {
    /// Past this many cached devices the cache starts afresh (memory stays bounded).
    static let capacity = 100_000

    private struct State {
        var records: [String: DeviceIdentityRecord] = [:]
        /// Bumped by every drop: a read started before it is not cached.
        var generation: UInt64 = 0
        var seen: [String: Date] = [:]
    }

    private let storage: any IdentityStorage
    private let now: @Sendable () -> Date
    private let rotated: @Sendable (DeviceIdentityRecord) async -> Void
    private let state = Mutex(State())

    /// `rotated` is told of each rotation completed here (the record as it was before).
    package init(
        storage: any IdentityStorage, now: @escaping @Sendable () -> Date,
        rotated: @escaping @Sendable (DeviceIdentityRecord) async -> Void = { _ in }
    ) {
        self.storage = storage
        self.now = now
        self.rotated = rotated
    }

    /// The device the credential speaks for, nil when it is not accepted (unknown device,
    /// revoked, wrong secret). A credential matching the pending digest completes the device's
    /// rotation (the device showed it holds the new one). Throws only when the storage cannot
    /// answer.
    package func authenticate(_ credential: DeviceCredential) async throws -> DeviceIdentityRecord? {
        guard var record = try await record(credential.deviceID), record.revokedAt == nil else { return nil }
        var match = SecretDigest.matches(credential, current: record.credentialDigest, pending: record.pendingDigests)
        if match == .none {
            // The cached record may predate the credential: handed over by another instance
            // (a rotation, a re-enrollment) whose notification has not arrived yet. One read of
            // the storage decides.
            invalidate(deviceID: credential.deviceID)
            guard let fresh = try await self.record(credential.deviceID), fresh.revokedAt == nil else { return nil }
            record = fresh
            match = SecretDigest.matches(credential, current: record.credentialDigest, pending: record.pendingDigests)
        }
        switch match {
        case .none:
            return nil
        case .current:
            break
        case .pending(let digest):
            if try await completeRotation(of: record, digest: digest, how: "the device bound with its new credential") {
                record.credentialDigest = digest
                record.pendingDigests = []
                record.rotationRequestedAt = nil
                record.credentialIssuedAt = now()
            }
        }
        let seenAt = now()
        state.withLock { $0.seen[record.id] = seenAt }
        return record
    }

    /// Makes `digest` the device's only credential (it showed it holds it), with its audit
    /// record; false when it is no longer pending (another instance completed it, or it was
    /// revoked). Drops the cached record either way.
    package func completeRotation(of record: DeviceIdentityRecord, digest: [UInt8], how: String) async throws -> Bool {
        let at = now()
        let audit = AuditRecord(at: at, actor: record.name, action: "device.rotated", subject: record.name, detail: how)
        defer { invalidate(deviceID: record.id) }
        guard try await storage.completeRotation(deviceID: record.id, digest: digest, at: at, audit: audit) else { return false }
        await rotated(record)
        return true
    }

    /// The device's record, from the cache or the storage.
    func record(_ deviceID: String) async throws -> DeviceIdentityRecord? {
        let (cached, generation) = state.withLock { ($0.records[deviceID], $0.generation) }
        if let cached { return cached }
        guard let record = try await storage.device(id: deviceID) else { return nil }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.records.count >= Self.capacity { state.records.removeAll(keepingCapacity: true) }
            state.records[deviceID] = record
        }
        return record
    }

    /// Forgets what is cached of the device (it changed).
    package func invalidate(deviceID: String) {
        state.withLock { state in
            state.records[deviceID] = nil
            state.generation &+= 1
        }
    }

    /// Forgets what is cached of the device named `name` (another instance announced a change
    /// by name).
    package func invalidate(named name: String) {
        state.withLock { state in
            for (id, record) in state.records where record.name == name { state.records[id] = nil }
            state.generation &+= 1
        }
    }

    /// Forgets every cached device (after a reconnect of the cluster bus: changes may be missed).
    package func invalidateAll() {
        state.withLock { state in
            state.records.removeAll()
            state.generation &+= 1
        }
    }

    /// Writes when each device was seen since the last flush (one batch); on a storage failure
    /// they are kept for the next one.
    package func flushSeen() async throws {
        let seen = state.withLock { state in
            defer { state.seen.removeAll() }
            return state.seen
        }
        guard !seen.isEmpty else { return }
        do {
            try await storage.touchDevices(seen)
        } catch {
            state.withLock { state in
                for (id, at) in seen where (state.seen[id] ?? .distantPast) < at { state.seen[id] = at }
            }
            throw error
        }
    }
}
