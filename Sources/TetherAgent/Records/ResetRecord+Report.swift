import TetherControl
import TetherProtocol

extension ResetRecord {
    /// Why this reset waits for an operator, for `tetherctl status`; nil when it does not wait.
    var pendingReason: String? {
        guard phase == .manualHook || phase == .manualPending else { return nil }
        if let fallbackReason { return fallbackReason }
        return strategy == .deleteStore ? "access was denied (delete-store action)" : "the partition's mode is manual"
    }

    /// The `tetherctl resets` entry (docs/contract.md: tetherctl).
    package var report: ResetReport {
        ResetReport(
            id: id, partition: partition.rawValue, errorCode: errorCode.rawValue, errorMessage: errorMessage, mode: mode.rawValue,
            strategy: strategy.rawValue, outcome: outcome.rawValue, phase: phase.rawValue, backupPath: backupPath,
            backupRemoved: backupRemoved, startedAt: PartitionStatus.iso8601(startedAt),
            finishedAt: finishedAt.map(PartitionStatus.iso8601), fallbackReason: fallbackReason, cause: cause?.rawValue,
            quarantined: isQuarantine, quarantineReason: quarantineReason, recoveredChanges: recoveredChanges,
            droppedChanges: droppedChanges, healedChanges: healedChanges, resultServerVersion: resultServerVersion, loopRepeats: loopRepeats ?? 0,
            backupReusedFrom: backupReusedFrom,
            hooks: hooks.map { run in
                HookRunReport(
                    event: run.event.rawValue, result: run.result.summary, succeeded: run.result.isSuccess,
                    finishedAt: PartitionStatus.iso8601(run.finishedAt))
            })
    }
}
