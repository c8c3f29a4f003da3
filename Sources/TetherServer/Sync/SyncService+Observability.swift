import Foundation
import Synchronization
import TetherProtocol

extension SyncService {
    /// `/healthz`: whether the storage can serve (a read of the server's flags succeeds), with
    /// a one-line reason when it cannot.
    func health() async -> (ok: Bool, line: String) {
        do {
            _ = try await storage.policy.flags()
            return (true, "ok")
        } catch {
            return (false, "storage unavailable: \(Self.oneLine(error))")
        }
    }

    /// The gauges `/metrics` reads at scrape time: all from memory (the hub, the policy and
    /// the ``PartitionSummary``), none from the storage, so a scrape costs the same whatever
    /// the history holds and cannot be used to load the database.
    func metricsSnapshot() async -> ServerMetrics.Snapshot {
        ServerMetrics.Snapshot(
            connectedDevices: await hub.connectionCount,
            boundSessions: await hub.sessionCounts().values.reduce(0, +),
            syncEnabled: !(await policy.snapshot.flags.syncTerminated),
            partitionVersions: summary.all,
            stateDownloads: storage.history.stateDownloads,
            devices: ledgerCounts.withLock { $0 })
    }

    static func oneLine(_ error: any Error) -> String {
        String("\(error)".map { $0.isNewline ? " " : $0 }.prefix(300))
    }
}
