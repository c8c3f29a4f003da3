import Foundation
import TetherProtocol

extension SyncService {
    /// `/healthz`: whether the storage can serve (a read of the server's flags succeeds), with
    /// a one-line reason when it cannot.
    func health() async -> (ok: Bool, line: String) {
        do {
            _ = try await storage.flags()
            return (true, "ok")
        } catch {
            return (false, "storage unavailable: \(Self.oneLine(error))")
        }
    }

    /// The gauges `/metrics` reads at scrape time.
    func metricsSnapshot() async throws -> ServerMetrics.Snapshot {
        let partitions = try await storage.partitions()
        let flags = try await storage.flags()
        return ServerMetrics.Snapshot(
            connectedDevices: await hub.connectionCount,
            boundSessions: await hub.sessionCounts().values.reduce(0, +),
            syncEnabled: !flags.syncTerminated,
            partitionVersions: Dictionary(partitions.map { ($0.name, $0.head.latest.version) }, uniquingKeysWith: max),
            stateDownloads: storage.stateDownloads)
    }

    static func oneLine(_ error: any Error) -> String {
        String("\(error)".map { $0.isNewline ? " " : $0 }.prefix(300))
    }
}
