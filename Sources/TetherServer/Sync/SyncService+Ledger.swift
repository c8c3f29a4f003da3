import Foundation
import Logging
import TetherProtocol

/// The device ledger's intake (docs/server.md, "Device ledger").
extension SyncService {
    /// Keeps a device's report when its token names a user (whatever that user's grants: a
    /// device whose access was revoked is one an operator needs to see). Returns whether the
    /// token was accepted (the connection counts as authenticated then). A storage failure is
    /// logged and the report dropped: the next one replaces it.
    func recordReport(_ report: DeviceReport) async -> Bool {
        let snapshot = await policy.snapshot
        guard let user = snapshot.users.authenticate(report.token) else {
            logger.notice("device report refused: its access token was not accepted", metadata: ["device": "\(report.deviceID)"])
            return false
        }
        let entries = DeviceLedgerEntry.entries(of: report, user: user, receivedAt: now())
        do {
            try await storage.recordDeviceReports(entries)
        } catch {
            logger.warning("cannot keep a device report in the ledger", metadata: [
                "device": "\(report.deviceID)", "error": "\(Self.oneLine(error))",
            ])
        }
        return true
    }

    /// The ledger's counts now (nil when the storage cannot answer); ``DeviceCountsService``
    /// keeps the last ones for `/metrics`.
    func deviceCounts() async -> DeviceCounts? {
        let now = now()
        return try? await storage.deviceCounts(
            staleBefore: now - TimeInterval(devices.staleAfterSeconds), wedgedBefore: now - TimeInterval(devices.wedgedAfterSeconds))
    }
}
