import Foundation
public import TetherControl
public import TetherProtocol

/// One partition's live status: what `tetherctl status` prints and `STATUS=` summarises.
public struct PartitionStatus: Sendable, Hashable {
    /// A bootstrap's or a reset's download of the server's state, as far as it got.
    public struct Progress: Sendable, Hashable {
        public var rowsDone: Int64
        public var rowsTotal: Int64
        public var bytesDone: Int64
        public var bytesTotal: Int64
        /// When the download started, seconds since the epoch.
        public var startedAt: Double
        /// When the last chunk arrived.
        public var updatedAt: Double

        /// Rows and bytes per second since the start (0 before a second chunk).
        public var rate: (rows: Double, bytes: Double) {
            let elapsed = updatedAt - startedAt
            guard elapsed > 0 else { return (0, 0) }
            return (Double(rowsDone) / elapsed, Double(bytesDone) / elapsed)
        }
    }

    public var name: PartitionName
    public var state: PartitionState
    public var serverVersion: Int64
    /// The newest version the server said it has.
    public var latestServerVersion: Int64
    public var unsyncedChanges: Int
    public var lastError: PartitionStatusRow.LastError?
    public var pendingReset: String?
    /// Why the pending reset waits for an operator (a manual mode, a fallback such as a reset
    /// loop, a delete-store action); nil when no reset is pending.
    public var pendingResetReason: String?
    /// While bootstrapping a store or fetching the server's state for a reset.
    public var download: Progress?

    public init(name: PartitionName, state: PartitionState) {
        self.name = name
        self.state = state
        self.serverVersion = 0
        self.latestServerVersion = 0
        self.unsyncedChanges = 0
    }

    /// Every local change uploaded and the store at the server's latest version (the controller
    /// promotes `syncing` to `synced` only once its session is ready: never while bootstrapping).
    public var isSynced: Bool { state == .synced }

    /// The counts say caught up: nothing unsynced, the server's latest version integrated.
    var isCaughtUp: Bool { unsyncedChanges == 0 && serverVersion >= latestServerVersion }

    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name.rawValue), "state": .string(state.rawValue),
            "server_version": .number(Double(serverVersion)), "unsynced_changes": .number(Double(unsyncedChanges)),
            "pending_reset": .from(pendingReset), "pending_reset_reason": .from(pendingResetReason),
            "last_error": .null, "download": .null,
        ]
        if let error = lastError {
            object["last_error"] = [
                "code": .number(Double(error.code)), "message": .string(error.message), "at": .string(Self.iso8601(error.at)),
                "cause": .from(LineageCause(SyncError(SyncErrorCode(error.code), error.message))?.rawValue),
            ]
        }
        if let download {
            let rate = download.rate
            object["download"] = [
                "rows_done": .number(Double(download.rowsDone)), "rows_total": .number(Double(download.rowsTotal)),
                "bytes_done": .number(Double(download.bytesDone)), "bytes_total": .number(Double(download.bytesTotal)),
                "started_at": .string(Self.iso8601(download.startedAt)),
                "rows_per_second": .number(rate.rows.rounded()), "bytes_per_second": .number(rate.bytes.rounded()),
            ]
        }
        return .object(object)
    }

    static func iso8601(_ time: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }

    /// `3 partitions: 2 synced, 1 offline` — the systemd `STATUS=` line.
    public static func summary(_ statuses: [PartitionStatus]) -> String {
        var counts: [PartitionState: Int] = [:]
        for status in statuses { counts[status.state, default: 0] += 1 }
        let parts = PartitionState.allCases.compactMap { state in counts[state].map { "\($0) \(state.rawValue)" } }
        let noun = statuses.count == 1 ? "partition" : "partitions"
        return parts.isEmpty ? "\(statuses.count) \(noun)" : "\(statuses.count) \(noun): \(parts.joined(separator: ", "))"
    }
}

extension ResetRecord {
    /// Why this reset waits for an operator, for `tetherctl status`; nil when it does not wait.
    var pendingReason: String? {
        guard phase == .manualHook || phase == .manualPending else { return nil }
        if let fallbackReason { return fallbackReason }
        return strategy == .deleteStore ? "access was denied (delete-store action)" : "the partition's mode is manual"
    }

    /// The `tetherctl resets` entry (docs/contract.md: tetherctl).
    public var json: JSONValue {
        .object([
            "id": .string(id), "partition": .string(partition.rawValue), "error_code": .number(Double(errorCode.rawValue)),
            "error_message": .string(errorMessage), "mode": .string(mode.rawValue), "strategy": .string(strategy.rawValue),
            "outcome": .string(outcome.rawValue), "phase": .string(phase.rawValue), "backup_path": .string(backupPath),
            "backup_removed": .bool(backupRemoved), "started_at": .string(PartitionStatus.iso8601(startedAt)),
            "finished_at": finishedAt.map { .string(PartitionStatus.iso8601($0)) } ?? .null,
            "fallback_reason": .from(fallbackReason), "cause": .from(cause?.rawValue),
            "quarantined": .bool(isQuarantine), "quarantine_reason": .from(quarantineReason),
            "recovered_changes": .from(recoveredChanges), "dropped_changes": .from(droppedChanges),
            "result_server_version": resultServerVersion.map { .number(Double($0)) } ?? .null,
            "loop_repeats": .number(Double(loopRepeats ?? 0)), "backup_reused_from": .from(backupReusedFrom),
            "hooks": .array(hooks.map { run in
                ["event": .string(run.event.rawValue), "result": .string(run.result.summary), "succeeded": .bool(run.result.isSuccess),
                 "finished_at": .string(PartitionStatus.iso8601(run.finishedAt))]
            }),
        ])
    }
}
