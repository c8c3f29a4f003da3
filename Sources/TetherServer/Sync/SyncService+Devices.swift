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

    /// A device changed (revoked, removed, tagged, renamed, rotated), here or on another
    /// instance: its cached record goes, and its sessions bound here are re-checked — a revoked
    /// or removed device's end with 203 at once, one whose tags or name changed binds again.
    /// Returns how many sessions were told.
    @discardableResult
    package func deviceChanged(_ deviceID: String) async -> Int {
        deviceCredentials.invalidate(deviceID: deviceID)
        let sessions = await hub.bound { $0.subject.deviceID == deviceID }
        guard !sessions.isEmpty else { return 0 }
        let record: DeviceIdentityRecord?
        do {
            record = try await storage.identity.device(id: deviceID)
        } catch {
            logger.error("cannot re-read a changed device; its sessions are checked at their next bind", metadata: [
                "device": "\(deviceID)", "error": "\(Self.oneLine(error))",
            ])
            return 0
        }
        let access = await policy.snapshot.access
        let failures = sessions.compactMap { session in
            BindRules.revalidate(session, device: record, policy: access).map { (session, $0) }
        }
        await fence.push(failures)
        if !failures.isEmpty {
            logger.notice("sessions of a changed device told", metadata: ["device": "\(deviceID)", "sessions": "\(failures.count)"])
        }
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
