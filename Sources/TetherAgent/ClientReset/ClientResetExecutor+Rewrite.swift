import Foundation
import Logging
import TetherProtocol
import TetherStore

extension ClientResetExecutor {
    /// Step 5: the live store becomes the fetched server state, in one transaction, with the
    /// unsynced changes replayed when recovering (or emptied, for a delete-store). A restart
    /// that finds the store already carrying the fetched identity knows the rewrite committed.
    func rewrite(_ strategy: ResetStrategy, record: ResetRecord, store: PartitionStore, context: ResetContext, log: Logger) async
        -> ClientResetCoordinator.Event
    {
        if strategy == .deleteStore {
            do {
                let deleted = try await store.emptyInPlace()
                log.notice("client reset \(record.id): store emptied in place (\(deleted) rows; they are in the backup)")
                return .rewriteCompleted(recovered: 0, dropped: 0)
            } catch {
                return .effectFailed(reason: "emptying the store: \(error)")
            }
        }
        let staging = context.stagingPath(record)
        guard let fetched = FetchedState.existing(at: staging, partition: record.partition) else {
            log.warning("client reset \(record.id): the fetched server state is gone; fetching it again")
            return .serverStateLost
        }
        do {
            if try await store.metadata().clientFile == fetched.identity {
                // Committed before a restart: what is pending now is what was recovered.
                let pending = try await store.pendingChangeCount()
                PartitionStore.removeFiles(at: staging)
                return .rewriteCompleted(recovered: strategy == .recover ? pending : 0, dropped: 0, serverVersion: fetched.serverVersion.version)
            }
            let state = try StoreStateSource(path: staging, schema: fetched.schema)
            let report = try await store.resetInPlace(
                to: state, serverVersion: fetched.serverVersion, schema: fetched.schema, clientFile: fetched.identity,
                recovering: strategy == .recover ? .pendingChanges : nil, keepingChangesOfAbsentRows: record.viewContributed == true,
                resetMarker: record.id, subscriptions: fetched.subscriptions)
            PartitionStore.removeFiles(at: staging)
            let rewrite = report.rewrite
            log.notice(
                "client reset \(record.id): store rewritten in place to server version \(fetched.serverVersion.version) (\(rewrite.inserted) rows inserted, \(rewrite.updated) updated, \(rewrite.deleted) deleted, \(rewrite.unchanged) unchanged; \(report.localChangesCleared) unsynced changes \(strategy == .recover ? "replayed" : "discarded, kept in the backup"))")
            if let recovery = report.recovery {
                log.notice(
                    "client reset \(record.id): recovery kept \(recovery.kept) changes (\(recovery.insertsKept) inserts, \(recovery.insertsMerged) merged inserts, \(recovery.updatesKept) updates, \(recovery.deletesKept) deletes) and dropped \(recovery.dropped) (\(recovery.updatesDropped) updates of rows deleted on the server, \(recovery.deletesDropped) deletes of rows already gone)")
            }
            return .rewriteCompleted(
                recovered: report.recovery?.kept ?? 0, dropped: report.recovery?.dropped ?? 0, serverVersion: fetched.serverVersion.version)
        } catch where strategy == .recover && Self.meansRecoveryImpossible(error) {
            return .recoveryImpossible(reason: error.description)
        } catch {
            return .effectFailed(reason: "rewriting the store: \(error)")
        }
    }

    /// Local changes that no longer fit the server's schema cannot be replayed.
    static func meansRecoveryImpossible(_ error: StoreError) -> Bool {
        switch error {
        case .unknownTable, .unknownColumn, .typeMismatch, .missingValue: true
        default: false
        }
    }

    /// Step 7: the reset is done. Older backups of the partition go once `keep_backups` newer
    /// ones exist and their own reset finished.
    func finish(_ record: ResetRecord, context: ResetContext, log: Logger) {
        log.notice(
            "client reset \(record.id) of \(record.partition) completed: \(record.outcome.rawValue); backup kept at \(record.backupPath)",
            metadata: ["message_id": .string(TetherMessageID.resetCompleted.rawValue), "tether.backup": .string(record.backupPath)])
        pruneBackups(of: record.partition, keep: context.partition.reset.keepBackups, log: log)
        removeStrayStagingFiles(of: record.partition, stateDir: context.stateDir, log: log)
        StoreMemory.releaseFreedMemory()
    }

    /// Removes the backups ``BackupRetention`` says may go, and records that they are gone.
    func pruneBackups(of partition: PartitionName, keep: Int, log: Logger) {
        do {
            let records = try stateDatabase.resets(partition: partition)
            for var expired in BackupRetention.expired(records, keep: keep) {
                do {
                    try FileManager.default.removeItem(atPath: expired.backupPath)
                } catch where FileManager.default.fileExists(atPath: expired.backupPath) {
                    // Recorded as kept: the next prune tries again, and `tetherctl resets` does
                    // not call a file that is still there removed.
                    log.warning("could not remove backup \(expired.backupPath) of reset \(expired.id) (\(keep) newer backups exist): \(error)")
                    continue
                }
                expired.backupRemoved = true
                try stateDatabase.save(expired)
                log.info("removed backup \(expired.backupPath) of reset \(expired.id): \(keep) newer backups exist")
            }
        } catch {
            log.warning("could not prune old backups of \(partition): \(error)")
        }
    }

    /// Staging copies of the server's state that belong to no reset still under way (left by
    /// a reset that failed while fetching, or by an interrupted bootstrap) are removed once a
    /// reset of the partition finished, so repeated failures cannot fill the disk.
    func removeStrayStagingFiles(of partition: PartitionName, stateDir: String, log: Logger) {
        let directory = stateDir + "/staging"
        // Cleanup: no staging directory (none made yet, or not readable) leaves nothing to remove.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let records: [ResetRecord]
        do { records = try stateDatabase.resets(partition: partition) } catch {
            log.warning("could not look for stray staging files of \(partition): \(error)")
            return
        }
        let active = Set(records.filter { $0.phase != .done }.map(\.id))
        let prefix = "\(partition)-"
        for name in names where name.hasPrefix(prefix) {
            // `<partition>-<16 hex digit reset id>.sqlite` exactly (another partition's name may
            // start with this one's), and a ready file's part and note beside it.
            guard let suffix = [".sqlite", ".sqlite.ready", ".sqlite.ready.json"].first(where: { name.hasSuffix($0) }) else { continue }
            let id = String(name.dropFirst(prefix.count).dropLast(suffix.count))
            guard id.count == 16, id.allSatisfy(\.isHexDigit), !active.contains(id) else { continue }
            if suffix == ".sqlite" {
                PartitionStore.removeFiles(at: directory + "/" + name)
            } else {
                // Best effort: one that stays is tried again after the next reset.
                try? FileManager.default.removeItem(atPath: directory + "/" + name)
            }
            log.info("removed stray staging file \(directory)/\(name)")
        }
    }

    /// The previous reset of `partition`, when the store has not changed since it finished:
    /// still at the version it produced and nothing unsynced. Its backup must still exist.
    func unchangedSincePrevious(_ store: PartitionStore, serverVersion: Int64, partition: PartitionName) async throws -> ResetRecord? {
        guard let previous = try stateDatabase.resets(partition: partition).last(where: { !$0.isQuarantine }),
            previous.phase == .done, previous.strategy != .deleteStore, !previous.backupRemoved,
            previous.resultServerVersion == serverVersion, FileManager.default.fileExists(atPath: previous.backupPath),
            try await store.pendingChangeCount() == 0
        else { return nil }
        return previous
    }

    /// A logger carrying the reset's partition, id and error code (journal fields).
    func logger(for record: ResetRecord) -> Logger {
        var log = logger
        log[metadataKey: "tether.partition"] = .string(record.partition.rawValue)
        log[metadataKey: "tether.reset_id"] = .string(record.id)
        log[metadataKey: "tether.error_code"] = .stringConvertible(record.errorCode.rawValue)
        return log
    }
}
