import Foundation
import TetherControl
import TetherProtocol

/// One partition's live status: what `tetherctl status` prints and `STATUS=` summarises.
package struct PartitionStatus: Sendable, Hashable {
    /// A bootstrap's or a reset's download of the server's state, as far as it got.
    package struct Progress: Sendable, Hashable {
        package var rowsDone: Int64
        package var rowsTotal: Int64
        package var bytesDone: Int64
        package var bytesTotal: Int64
        /// When the download started, seconds since the epoch.
        package var startedAt: Double
        /// When the last chunk arrived.
        package var updatedAt: Double

        /// Rows and bytes per second since the start (0 before a second chunk).
        package var rate: (rows: Double, bytes: Double) {
            let elapsed = updatedAt - startedAt
            guard elapsed > 0 else { return (0, 0) }
            return (Double(rowsDone) / elapsed, Double(bytesDone) / elapsed)
        }
    }

    package var name: PartitionName
    package var state: PartitionState
    package var serverVersion: Int64
    /// The newest version the server said it has.
    package var latestServerVersion: Int64
    package var unsyncedChanges: Int
    package var lastError: PartitionStatusRow.LastError?
    package var pendingReset: String?
    /// Why the pending reset waits for an operator (a manual mode, a fallback such as a reset
    /// loop, a delete-store action); nil when no reset is pending.
    package var pendingResetReason: String?
    /// While bootstrapping a store or fetching the server's state for a reset.
    package var download: Progress?
    /// The store's client file (its sync identity) as the server last confirmed it; 0 before.
    package var clientFile: Int64 = 0
    /// Since when changes have waited unsynced (seconds since the epoch): when the count last
    /// rose from 0, or when the agent started with some; nil with none unsynced.
    package var unsyncedSince: Double?
    /// When the count of unsynced changes last fell (an upload acknowledged), in this run.
    package var lastUploadAt: Double?
    /// The store's subscriptions differ from the configured ones and the change is not done
    /// (set at bind, cleared by the last subscription chunk): not caught up meanwhile.
    package var subscriptionsPending = false
    /// Changes the server reverted in this run (error 231), and the last of them.
    package var compensatingWrites = 0
    package var lastCompensatingWrite: CompensatingWriteReport?

    package init(name: PartitionName, state: PartitionState) {
        self.name = name
        self.state = state
        self.serverVersion = 0
        self.latestServerVersion = 0
        self.unsyncedChanges = 0
    }

    /// Every local change uploaded and the store at the server's latest version (the controller
    /// promotes `syncing` to `synced` only once its session is ready: never while bootstrapping).
    package var isSynced: Bool { state == .synced }

    /// The counts say caught up: nothing unsynced, the server's latest version integrated, and
    /// the store's subscriptions the configured ones.
    var isCaughtUp: Bool { unsyncedChanges == 0 && serverVersion >= latestServerVersion && !subscriptionsPending }

    /// The partition's entry of `tetherctl status` (``PartitionReport``).
    package var report: PartitionReport {
        PartitionReport(
            name: name.rawValue, state: state.rawValue, serverVersion: serverVersion, unsyncedChanges: unsyncedChanges,
            lastError: lastError.map { error in
                LastErrorReport(
                    code: error.code, message: error.message, at: Self.iso8601(error.at),
                    cause: LineageCause(SyncError(SyncErrorCode(error.code), error.message))?.rawValue)
            },
            pendingReset: pendingReset, pendingResetReason: pendingResetReason,
            download: download.map { download in
                let rate = download.rate
                return DownloadReport(
                    rowsDone: download.rowsDone, rowsTotal: download.rowsTotal, bytesDone: download.bytesDone,
                    bytesTotal: download.bytesTotal, startedAt: Self.iso8601(download.startedAt),
                    rowsPerSecond: rate.rows.rounded(), bytesPerSecond: rate.bytes.rounded())
            },
            compensatingWrites: compensatingWrites, lastCompensatingWrite: lastCompensatingWrite,
            subscriptionsPending: subscriptionsPending)
    }

    /// RFC 3339, UTC, milliseconds (`2026-11-26T20:53:01.123Z`). Not `ISO8601DateFormatter`:
    /// it loads ICU's time-zone, locale and calendar data into every agent that answers a
    /// `tetherctl status` (about 4.5 MB of its resident memory, BENCHMARKS.md "Idle memory").
    static func iso8601(_ time: Double) -> String {
        AgentEvent.timestamp(Date(timeIntervalSince1970: time))
    }

    /// `3 partitions: 2 synced, 1 offline` — the systemd `STATUS=` line.
    package static func summary(_ statuses: [PartitionStatus]) -> String {
        var counts: [PartitionState: Int] = [:]
        for status in statuses { counts[status.state, default: 0] += 1 }
        let parts = PartitionState.allCases.compactMap { state in counts[state].map { "\($0) \(state.rawValue)" } }
        let noun = statuses.count == 1 ? "partition" : "partitions"
        return parts.isEmpty ? "\(statuses.count) \(noun)" : "\(statuses.count) \(noun): \(parts.joined(separator: ", "))"
    }
}
