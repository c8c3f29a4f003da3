import Foundation
import Logging
import TetherProtocol
import TetherStore

/// A store that is corrupt or not SQLite goes through the reset machinery like every other
/// reset: recorded (phase `quarantining`, strategy discard, the backup path is where the store
/// goes), moved, done — and a crash at any point resumes it (docs/client-reset.md).
extension ClientResetExecutor {
    /// Records the quarantine of the store of `context`'s partition because of `problem`.
    package func recordQuarantine(because problem: StoreError, context: ResetContext) throws -> ResetRecord {
        let now = now()
        let id = ResetRecord.newID()
        let partition = context.partition
        let record = ResetRecord(
            id: id, partition: partition.name, error: SyncError(.badClientFile, "the store file is damaged: \(problem)"), mode: partition.reset.mode, strategy: .discard,
            fallbackReason: "the store was quarantined: it is corrupt or not SQLite",
            backupPath: ResetRecord.quarantinePath(recoveryDir: partition.reset.recoveryDir, partition: partition.name, id: id, at: now),
            startedAt: now)
        var quarantine = record
        quarantine.quarantineReason = problem.description
        let coordinator = ClientResetCoordinator(quarantine: quarantine)
        try stateDatabase.save(coordinator.record)
        return coordinator.record
    }

    /// The effect of phase `quarantining`: moves the store aside (idempotent: after a crash
    /// it moves what is still in place) and ends a reset that was under way on it.
    func quarantine(_ record: ResetRecord, to path: String, context: ResetContext, log: Logger) -> ClientResetCoordinator.Event {
        let storePath = context.partition.storePath
        do {
            try StoreQuarantine.move(store: storePath, to: path)
        } catch {
            log.error("\(error); \(error.hint)")
            return .effectFailed(reason: "\(error)")
        }
        do {
            // A reset that was under way on the damaged store cannot go on: it ends here.
            for var active in try stateDatabase.resets(partition: record.partition)
            where active.id != record.id && active.phase != .done && !active.isQuarantine {
                active.phase = .done
                active.outcome = .discarded
                active.finishedAt = now()
                active.fallbackReason = "the store was quarantined by reset \(record.id) before this reset finished"
                try stateDatabase.save(active)
            }
        } catch {
            return .effectFailed(reason: "ending the reset under way on the damaged store: \(error)")
        }
        log.error(
            "store \(storePath) is damaged (\(record.quarantineReason ?? "corrupt")); it was moved to \(path) and the partition is bootstrapped again from the server; the file may be salvaged with `sqlite3 \(path) .recover`; unsynced changes in it are not recovered automatically",
            metadata: [
                "message_id": .string(TetherMessageID.storeQuarantined.rawValue),
                "tether.error_code": .stringConvertible(record.errorCode.rawValue), "tether.backup": .string(path),
            ])
        return .quarantined
    }
}
