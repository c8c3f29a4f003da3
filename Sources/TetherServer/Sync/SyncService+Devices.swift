import Foundation
import Logging
import TetherProtocol

/// Enrolled devices as binds and reports see them (issue 48; docs/server.md "Enrollment").
extension SyncService {
    /// Whom `token` names: a `[[user]]` (its token file's token, unchanged), or the enrolled
    /// device a device credential speaks for (``DeviceCredentials``); nil when neither. Throws
    /// only when the storage cannot say.
    package func subject(of token: String, users: UserDirectory) async throws -> AccessSubject? {
        guard let credential = DeviceCredential(parsing: token) else {
            return users.authenticate(token).map(AccessSubject.user)
        }
        guard let record = try await deviceCredentials.authenticate(credential) else { return nil }
        return .device(id: record.id, name: record.name, tags: record.tags)
    }

    /// A device changed (revoked, removed, tagged, renamed, rotated, enrolled again) here: its
    /// cached record goes, and its sessions bound here are re-checked — a revoked or removed
    /// device's end with 203 at once, one whose tags or name changed binds again. Returns how
    /// many sessions were told.
    @discardableResult
    package func deviceChanged(_ deviceID: String) async -> Int {
        deviceCredentials.invalidate(deviceID: deviceID)
        return await recheck(sessions: await hub.bound { $0.subject.deviceID == deviceID }, device: deviceID) {
            try await self.storage.identity.device(id: deviceID)
        }
    }

    /// ``deviceChanged(_:)`` for a change another instance announced by the device's name
    /// (``ClusterEvent/deviceChanged(_:)``, ``ClusterEvent/deviceRevoked(_:)``).
    @discardableResult
    package func deviceChanged(named name: String) async -> Int {
        deviceCredentials.invalidate(named: name)
        return await recheck(sessions: await hub.bound { $0.subject.isDevice && $0.user == name }, device: name) {
            try await self.storage.identity.device(named: name)
        }
    }

    /// Tells each of `sessions` (all of one device) why it may no longer sync as it bound, by
    /// the device's record as `read` gives it now.
    private func recheck(
        sessions: [BoundSession], device: String, read: () async throws -> DeviceIdentityRecord?
    ) async -> Int {
        guard !sessions.isEmpty else { return 0 }
        let record: DeviceIdentityRecord?
        do {
            record = try await read()
        } catch {
            logger.error("cannot re-read a changed device; its sessions are checked at their next bind", metadata: [
                "device": "\(device)", "error": "\(Self.oneLine(error))",
            ])
            return 0
        }
        let access = await policy.snapshot.access
        let failures = sessions.compactMap { session in
            BindRules.revalidate(session, device: record, policy: access).map { (session, $0) }
        }
        await fence.push(failures)
        if !failures.isEmpty {
            logger.notice("sessions of a changed device told", metadata: ["device": "\(device)", "sessions": "\(failures.count)"])
        }
        // A rotation asked for on another instance reaches the device's connections here.
        if let record, record.revokedAt == nil, record.rotationPending { await offerCredential(toDevice: record.id) }
        return failures.count
    }
}

extension SyncService {
    /// Drops every cached credential and re-checks the sessions of every device bound here
    /// (the cluster's resync: a notification of a device change may have been lost).
    package func recheckDevices() async {
        deviceCredentials.invalidateAll()
        let devices = Set(await hub.bound { $0.subject.isDevice }.compactMap(\.subject.deviceID))
        for id in devices.sorted() { await deviceChanged(id) }
    }
}
