import Foundation
import Logging
import TetherProtocol

/// The device ledger's intake (docs/server.md, "Device ledger").
extension SyncService {
    /// What became of one device report.
    struct ReportOutcome: Sendable, Hashable {
        /// The user the report's token names; nil when the token was not accepted (the report
        /// was dropped and the connection does not count as authenticated).
        var user: String?
        /// The enrolled device the report's credential spoke for (nil: a `[[user]]`, or refused).
        var deviceID: String?
        /// Entries not kept, by reason (``DeviceLedgerIntake``).
        var refused: [DeviceLedgerIntake.Refusal: Int] = [:]
    }

    /// Keeps what the ledger admits of a device's report when its token names a user: entries
    /// of partitions the user is granted (as a bind checks them), and updates of the entries
    /// that user's device already has (a device whose access was revoked stays visible), within
    /// the user's device quota and the ledger's room (``DeviceLedgerIntake``). Refused entries
    /// are counted in `tether_server_device_reports_refused_total`; the connection logs them. A
    /// storage failure is logged and the report dropped: the next one replaces it.
    func recordReport(_ report: DeviceReport) async -> ReportOutcome {
        let snapshot = await policy.snapshot
        let subject: AccessSubject?
        do {
            subject = try await self.subject(of: report.token, users: snapshot.users)
        } catch {
            logger.warning("cannot check a device report's credential", metadata: [
                "device": "\(report.deviceID)", "error": "\(Self.oneLine(error))",
            ])
            return ReportOutcome(user: nil)
        }
        guard let subject else {
            logger.notice("device report refused: its access token was not accepted", metadata: ["device": "\(report.deviceID)"])
            return ReportOutcome(user: nil)
        }
        // An enrolled device reports for itself only: its credential names its device id.
        if let deviceID = subject.deviceID, deviceID != report.deviceID {
            logger.notice("device report refused: it names another device than its credential", metadata: [
                "device": "\(report.deviceID)", "credential_device": "\(deviceID)",
            ])
            return ReportOutcome(user: nil)
        }
        let user = subject.name
        let entries = DeviceLedgerEntry.entries(of: report, user: user, receivedAt: now())
        let granted = Set(entries.lazy.map(\.partition).filter { name in
            PartitionName(name).flatMap { snapshot.access.access(subject, partition: $0) } != nil
        })
        do {
            let outcome = try await storage.ledger.admitDeviceReport(
                entries, granted: granted,
                limits: DeviceLedgerIntake.Limits(maxEntries: devices.maxEntries, maxDevicesPerUser: devices.maxDevicesPerUser))
            for (reason, count) in outcome.refused { metrics.deviceReportEntriesRefused(reason, count: count) }
            return ReportOutcome(user: user, deviceID: subject.deviceID, refused: outcome.refused)
        } catch {
            logger.warning("cannot keep a device report in the ledger", metadata: [
                "device": "\(report.deviceID)", "error": "\(Self.oneLine(error))",
            ])
            return ReportOutcome(user: user, deviceID: subject.deviceID)
        }
    }

    /// The ledger's counts now; ``DeviceCountsService`` keeps the last ones for `/metrics`
    /// (and logs why when the storage cannot answer).
    func deviceCounts() async throws -> DeviceCounts {
        let now = now()
        return try await storage.ledger.deviceCounts(
            staleBefore: now - TimeInterval(devices.staleAfterSeconds), wedgedBefore: now - TimeInterval(devices.wedgedAfterSeconds))
    }
}
