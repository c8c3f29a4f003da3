import Foundation
import TetherControl
import TetherProtocol

/// A state download's progress, end and refusal as the partition shows them: `tetherctl
/// status` (`download`, `last_error`) and the `download` events (``PartitionReporter``).
extension PartitionController {
    /// A chunk of the server's state arrived (a bootstrap, or a reset's step 4).
    func downloadProgress(_ progress: DownloadProgress) {
        lastProgress = .now
        reporter.downloadProgress(progress, partition: settings.name)
        figuresChanged()
    }

    /// A state download (a bootstrap, or a reset's step 4) was refused for lack of disk space:
    /// the partition's last error says so (the caller logs it), retried with backoff.
    func downloadRefused(_ error: DiskSpaceError) {
        recordError(SyncError(.otherSessionError, "\(error)", action: .retry))
    }

    /// The download is over: stored (`complete`), or failed.
    func downloadEnded(complete: Bool) {
        reporter.downloadEnded(complete: complete, partition: settings.name)
        figuresChanged()
    }
}
