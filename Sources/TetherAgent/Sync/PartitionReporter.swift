import Foundation
import Logging
import TetherControl
import TetherProtocol
import TetherStore

/// What a partition shows and announces: the figures `tetherctl status` shows with the
/// machine's state, the `state`, `sync-error` and `download` events (and the error hook), and
/// the partition's row of the state database. A value the ``PartitionController`` holds; it
/// tells the machine when the figures changed (whether the store caught up), so the reporter
/// never mutates the machine and only reads what it shows.
struct PartitionReporter: Sendable {
    let context: any AgentContext
    let log: Logger
    /// Every change of the shown status (for `wait-synced`).
    let statusChanges: StatusChanges
    /// The figures shown with the machine's state: versions, counts, last error, download.
    var figures: PartitionStatus
    private var published: PartitionStatus?
    /// A reset-causing error not announced yet: its sync-error event (and error hook run)
    /// carries the id of the reset it starts, known once the reset is recorded.
    private var unannouncedError: SyncError?
    /// The last tenth of a download announced as an event (-1: none yet).
    private var downloadTenths = -1
    /// Applied downloads not announced yet (`changes-applied`).
    private var appliedChanges = ChangesAppliedCoalescer()

    init(context: any AgentContext, log: Logger, statusChanges: StatusChanges, figures: PartitionStatus) {
        self.context = context
        self.log = log
        self.statusChanges = statusChanges
        self.figures = figures
    }

    // MARK: Status

    /// What `tetherctl status` shows: the machine's state and pending reset with the figures.
    func status(of machine: PartitionStateMachine) -> PartitionStatus {
        var status = figures
        status.state = machine.shownState
        status.pendingReset = machine.pendingReset?.id
        status.pendingResetReason = machine.pendingReset?.reason
        // A download is shown while it can be under way: a bootstrap, or a reset fetching.
        if status.state != .syncing && status.state != .resetting { status.download = nil }
        return status
    }

    /// Signals a change of the status (systemd's STATUS=, metrics, wait-synced) when there is one.
    mutating func publish(_ machine: PartitionStateMachine, settings: PartitionSettings) {
        let current = status(of: machine)
        guard current != published else { return }
        if current.state != published?.state {
            // What was applied before the change is told first.
            if let held = appliedChanges.flush(partition: settings.name.rawValue) { context.events.emit(held) }
            let reason = machine.stopReason ?? machine.pendingReset?.reason
            context.events.emit(AgentEvent(
                .state, partition: settings.name.rawValue, state: current.state.rawValue, message: reason, resetID: current.pendingReset))
            if current.state == .synced {
                context.events.emit(AgentEvent(.synced, partition: settings.name.rawValue, serverVersion: current.serverVersion))
            }
        }
        published = current
        context.statusChanged()
        statusChanges.changed()
    }

    /// The partition's row of the state database: pause, stop reason, last error.
    func statusRow(_ machine: PartitionStateMachine, settings: PartitionSettings) -> PartitionStatusRow {
        PartitionStatusRow(name: settings.name, paused: machine.isPaused, stoppedReason: machine.stopReason, lastError: figures.lastError)
    }

    /// Records a pause (`paused`) or a resume before the machine hears of it: it outlives a
    /// restart. A failure (a full disk) is thrown for the operator, and nothing changes.
    func recordPause(_ paused: Bool, _ machine: PartitionStateMachine, settings: PartitionSettings) throws {
        var row = statusRow(machine, settings: settings)
        row.paused = paused
        try context.stateDatabase.update(row)
    }

    /// Writes `row` to the state database, so a restart shows the same. When that fails (a
    /// full disk) the partition goes on with what it knows in memory; the journal says what a
    /// restart would not remember.
    func persist(_ row: PartitionStatusRow, _ what: String) {
        do {
            try context.stateDatabase.update(row)
        } catch {
            log.warning("could not record \(what) in the state database; a restart would not show it: \(error)")
        }
    }

    // MARK: Errors

    /// Announces `error` (event, error hook), with `resetID` when it belongs to a reset already
    /// recorded. `heldForItsReset`: the error starts a reset, and is announced with that
    /// reset's id once it is recorded (``announceHeldError(resetID:settings:)``), or without
    /// one if none starts.
    mutating func announce(_ error: SyncError, resetID: String?, heldForItsReset: Bool, settings: PartitionSettings) {
        if heldForItsReset {
            unannouncedError = error
        } else {
            announce(error, resetID: resetID, settings: settings)
        }
    }

    /// Announces a held reset-causing error that started no reset (deferred by the loop
    /// guard, a store already emptied, the session ended first).
    mutating func announceHeldError(resetID: String?, settings: PartitionSettings) {
        guard let error = unannouncedError else { return }
        unannouncedError = nil
        announce(error, resetID: resetID, settings: settings)
    }

    /// The sync-error event and the error hook's run for `error` (docs/events.md).
    private func announce(_ error: SyncError, resetID: String?, settings: PartitionSettings) {
        context.events.syncError(
            SyncErrorReport(error, partition: settings.name.rawValue, store: settings.storePath, resetID: resetID),
            settings: settings.events)
    }

    /// Compensating writes (error 231): each counted, announced as a `compensating-write`
    /// event and given to the error hook (folded like other errors of its code).
    mutating func compensated(_ notice: CompensatingWrites, settings: PartitionSettings) {
        let now = Date().timeIntervalSince1970
        for write in notice.writes {
            let key = write.key.text
            figures.compensatingWrites += 1
            figures.lastCompensatingWrite = CompensatingWriteReport(
                table: write.table, key: key, reason: write.reason.description, at: PartitionStatus.iso8601(now))
            context.events.compensatingWrite(
                write, partition: settings.name.rawValue, store: settings.storePath, serverVersion: notice.serverVersion.version,
                settings: settings.events)
        }
    }

    // MARK: Downloads

    /// A download was written into the store: announced as `changes-applied`, coalesced
    /// (``ChangesAppliedCoalescer``).
    mutating func applied(_ report: ApplyReport, caughtUp: Bool, partition: PartitionName) {
        if let event = appliedChanges.add(report, caughtUp: caughtUp, now: .now, partition: partition.rawValue) {
            context.events.emit(event)
        }
    }

    /// A chunk of the server's state arrived (a bootstrap, or a reset's step 4): announced at
    /// each further tenth, shown as the figures' download.
    mutating func downloadProgress(_ progress: DownloadProgress, partition: PartitionName) {
        announceDownload(progress, partition: partition)
        let now = Date().timeIntervalSince1970
        figures.download = .init(
            rowsDone: progress.rowsDone, rowsTotal: progress.rowsTotal, bytesDone: progress.bytesDone,
            bytesTotal: progress.bytesTotal, startedAt: figures.download?.startedAt ?? now, updatedAt: now)
    }

    /// The download is over: stored (`complete`), or failed.
    mutating func downloadEnded(complete: Bool, partition: PartitionName) {
        if let download = figures.download {
            context.events.emit(AgentEvent(
                .download, partition: partition.rawValue, phase: "finished", outcome: complete ? "complete" : "interrupted",
                rows: download.rowsDone, bytes: download.bytesDone))
        }
        downloadTenths = -1
        figures.download = nil
    }

    /// A `download` event when a download starts and at each further tenth of it.
    private mutating func announceDownload(_ progress: DownloadProgress, partition: PartitionName) {
        let fraction: Double? =
            progress.rowsTotal > 0 ? Double(progress.rowsDone) / Double(progress.rowsTotal)
            : progress.bytesTotal > 0 ? Double(progress.bytesDone) / Double(progress.bytesTotal) : nil
        let tenths = fraction.map { min(Int($0 * 10), 10) } ?? 0
        let started = figures.download == nil
        guard started || tenths > downloadTenths else { return }
        downloadTenths = max(tenths, 0)
        context.events.emit(AgentEvent(
            .download, partition: partition.rawValue, message: fraction.map { "\(Int($0 * 100)) %" },
            phase: started ? "started" : "progress", rows: progress.rowsDone, bytes: progress.bytesDone))
    }
}
