import Foundation
import TetherControl
import TetherProtocol

/// A state download's progress, end and refusal as the partition shows them: `tetherctl
/// status` (`download`, `last_error`) and the `download` events.
extension PartitionController {
    /// A chunk of the server's state arrived (a bootstrap, or a reset's step 4).
    func downloadProgress(_ progress: DownloadProgress) {
        lastProgress = .now
        announceDownload(progress)
        let now = Date().timeIntervalSince1970
        updateFigures {
            $0.download = .init(
                rowsDone: progress.rowsDone, rowsTotal: progress.rowsTotal, bytesDone: progress.bytesDone,
                bytesTotal: progress.bytesTotal, startedAt: $0.download?.startedAt ?? now, updatedAt: now)
        }
    }

    /// A state download (a bootstrap, or a reset's step 4) was refused for lack of disk space:
    /// the partition's last error says so (the caller logs it), retried with backoff.
    func downloadRefused(_ error: DiskSpaceError) {
        recordError(SyncError(.otherSessionError, "\(error)", action: .retry))
    }

    /// The download is over: stored (`complete`), or failed.
    func downloadEnded(complete: Bool) {
        if let download = figures.download {
            context.events.emit(AgentEvent(
                .download, partition: settings.name.rawValue, phase: "finished", outcome: complete ? "complete" : "interrupted",
                rows: download.rowsDone, bytes: download.bytesDone))
        }
        downloadTenths = -1
        updateFigures { $0.download = nil }
    }

    /// A `download` event when a download starts and at each further tenth of it.
    private func announceDownload(_ progress: DownloadProgress) {
        let fraction: Double? =
            progress.rowsTotal > 0 ? Double(progress.rowsDone) / Double(progress.rowsTotal)
            : progress.bytesTotal > 0 ? Double(progress.bytesDone) / Double(progress.bytesTotal) : nil
        let tenths = fraction.map { min(Int($0 * 10), 10) } ?? 0
        let started = figures.download == nil
        guard started || tenths > downloadTenths else { return }
        downloadTenths = max(tenths, 0)
        context.events.emit(AgentEvent(
            .download, partition: settings.name.rawValue, message: fraction.map { "\(Int($0 * 100)) %" },
            phase: started ? "started" : "progress", rows: progress.rowsDone, bytes: progress.bytesDone))
    }
}
