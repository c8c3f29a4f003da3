import Foundation
import Logging
import TetherControl
import TetherProtocol

/// The figures `tetherctl status` shows beside the state: the store's counts, and a state
/// download's progress, end and refusal (`download`, `last_error`, the `download` events of
/// ``PartitionReporter``).
extension PartitionController {
    /// Re-reads the counts (for `wait-synced`, and when nothing can be uploaded); a store that
    /// cannot be read now leaves them as they are (the journal says why).
    func recount() async {
        do { try await refreshCounts() } catch {
            log.warning("cannot read the store's version and unsynced count; the status shows the last ones: \(error)")
        }
    }

    /// Without a running session (offline, paused, stopped, waiting for a reset) nothing
    /// re-reads the counts after an application's commit: a status request does, so
    /// `tetherctl status` never shows `0` unsynced changes for a store that holds some. A store
    /// the agent has not opened (a partition paused since the start) is read from its file.
    func recountWithoutSession() async {
        if store != nil { return await recount() }
        guard let counts = StoreCounts.readShown(fileAt: settings.storePath, log: log) else { return }
        updateFigures(counts.show)
    }

    /// Re-reads the store's version and unsynced count (``StoreCounts``); clears the
    /// reset-cycle marker once the server has acknowledged everything a reset recovered.
    func refreshCounts() async throws {
        guard let store else { return }
        updateFigures(try await StoreCounts.read(store, log: log).show)
    }

    /// A state download (a bootstrap, or a reset's step 4) was refused for lack of disk space:
    /// the partition's last error says so (the caller logs it), retried with backoff.
    func downloadRefused(_ error: DiskSpaceError) {
        recordError(error.shownAsSyncError)
    }

    /// A reset's state download was refused because access is denied (206): the partition's
    /// last error says so while the reset retries (docs/client-reset.md).
    func stateRefused(_ error: SyncError) {
        recordError(error)
    }
}
