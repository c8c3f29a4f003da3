import Foundation
import Logging
import TetherProtocol
import TetherStore

/// A store that is corrupt, not SQLite, or whose tables an application altered
/// (docs/client-reset.md, "Damaged and altered stores").
extension PartitionController {
    /// Opens the store file if there is one and none is open: a corrupt one is quarantined
    /// (the partition then bootstraps from the server as a new store would), an altered one is
    /// opened as it is and ``alteredStore`` says what differs (a manual reset follows).
    func openStoreIfPresent() async throws {
        guard store == nil else { return }
        try completePendingQuarantines()
        guard FileManager.default.fileExists(atPath: settings.storePath) else { return }
        do {
            store = try await openCheckedStore()
        } catch let error where error.isCorruption {
            try await quarantine(because: error)
        } catch let error where error.isSchemaAlteration {
            guard let schema = try PartitionStore.recordedSchema(path: settings.storePath) else { throw error }
            store = try await PartitionStore.open(
                path: settings.storePath, partition: settings.name, schema: schema, tolerateAlteredTables: true)
        }
    }

    /// Opens the store and runs `PRAGMA quick_check`; logs capture triggers recreated at open.
    /// Nil for an empty database file.
    private func openCheckedStore() async throws(StoreError) -> PartitionStore? {
        // An empty file (an application opened the path before the first bootstrap): the
        // bootstrap creates the store in it.
        if try PartitionStore.isEmptyDatabase(path: settings.storePath) { return nil }
        guard let schema = try PartitionStore.recordedSchema(path: settings.storePath) else {
            throw StoreError.notAStore(path: settings.storePath)
        }
        let opened = try await PartitionStore.open(path: settings.storePath, partition: settings.name, schema: schema)
        let problems: [String]
        do {
            problems = try await opened.quickCheck()
        } catch {
            try? opened.close()
            throw error
        }
        guard problems.isEmpty else {
            try? opened.close()
            throw StoreError.corrupt(path: settings.storePath, problems: problems)
        }
        warnAboutRecreatedTriggers(opened.triggersRecreatedAtOpen)
        return opened
    }

    /// The application's alteration of the open store's tables, if any.
    var alteredStore: StoreError? { store?.alteration }

    /// After every commit: an application's schema change is noticed here (`PRAGMA
    /// schema_version` moved). Returns the alteration when the tables no longer match.
    func checkStoreSchema() async -> StoreError? {
        guard let store else { return nil }
        do {
            if case .triggersRecreated(let names) = try await store.checkSchema() { warnAboutRecreatedTriggers(names) }
            return nil
        } catch let error where error.isSchemaAlteration {
            return error
        } catch {
            log.debug("schema check of \(settings.storePath) failed: \(error)")
            return nil
        }
    }

    private func warnAboutRecreatedTriggers(_ names: [String]) {
        guard !names.isEmpty else { return }
        log.warning(
            "store \(settings.storePath): capture triggers \(names.joined(separator: ", ")) had been dropped or changed by an application and were recreated; application writes made while they were missing were not captured and will not sync (docs/contract.md: Partitions and stores: applications must not change a store's schema)")
    }

    /// Starts the manual reset of a store whose tables an application altered: recorded with
    /// its backup path, the manual hook runs, the store stays readable and writable but does
    /// not sync until `tetherctl reset initiate` or the next start (docs/contract.md: Manual resets and delete-store).
    func beginAlteredStoreReset(_ alteration: StoreError) async throws -> PartitionStateMachine.ResetEnd {
        if let active = try context.stateDatabase.activeReset(partition: settings.name) { return .waitsForOperator(.init(active)) }
        let error = SyncError(
            .badClientFile, "an application altered the store's schema: \(alteration)", action: .clientReset,
            hint: "applications must not change a store's tables (docs/contract.md: Partitions and stores); the reset backs the store up and rewrites it to the server's schema and state")
        log.error(
            "\(alteration); syncing of \(settings.name) stops and a manual client reset is recorded; fix the application, then run `tetherctl reset initiate \(settings.name)` (the store is backed up first; unsynced changes stay in the backup)",
            metadata: ["tether.error_code": .stringConvertible(error.code.rawValue)])
        recordError(error)
        return try await beginReset(error, manualBecause: "an application altered the store's schema (\(alteration.schemaAlterationSummary))")
    }

    // MARK: Quarantine

    /// Moves the damaged store to `<recovery_dir>/<partition>/<UTC time>-quarantine-<id>.sqlite`
    /// and records it like a discarding reset whose backup is that file. The record is written
    /// first (outcome `in-progress`), the files moved, then the record completed: a crash at
    /// any point is finished by ``completePendingQuarantines()`` at the next open.
    func quarantine(because problem: StoreError) async throws {
        if let store {
            try? store.close()
            self.store = nil
        }
        let now = Date().timeIntervalSince1970
        let id = ResetRecord.newID()
        let path = ResetRecord.quarantinePath(recoveryDir: settings.reset.recoveryDir, partition: settings.name, id: id, at: now)
        var record = ResetRecord(
            id: id, partition: settings.name, errorCode: .badClientFile,
            errorMessage: "the store file is damaged: \(problem)", mode: settings.reset.mode, strategy: .discard,
            fallbackReason: "the store was quarantined: it is corrupt or not SQLite", backupPath: path, startedAt: now)
        record.phase = .done
        record.quarantineReason = problem.description
        try context.stateDatabase.save(record)
        await FaultInjection.resetGate("quarantine")
        try completeQuarantine(record)
    }

    /// Finishes quarantines a crash interrupted (the store file, or part of it, still in place).
    func completePendingQuarantines() throws {
        for record in try context.stateDatabase.resets(partition: settings.name)
        where record.isQuarantine && record.outcome == .inProgress {
            try completeQuarantine(record)
        }
    }

    private func completeQuarantine(_ pending: ResetRecord) throws {
        var record = pending
        do {
            try StoreQuarantine.move(store: settings.storePath, to: record.backupPath)
        } catch {
            log.error("\(error); \(error.hint)", metadata: ["tether.reset_id": .string(record.id)])
            throw error
        }
        // A reset that was under way on the damaged store cannot go on: it ends here.
        if let active = try context.stateDatabase.activeReset(partition: settings.name) {
            var ended = active
            ended.phase = .done
            ended.outcome = .discarded
            ended.finishedAt = Date().timeIntervalSince1970
            ended.fallbackReason = "the store was quarantined by reset \(record.id) before this reset finished"
            try context.stateDatabase.save(ended)
        }
        record.outcome = .discarded
        record.finishedAt = Date().timeIntervalSince1970
        try context.stateDatabase.save(record)
        let message = "store \(settings.storePath) is damaged (\(record.quarantineReason ?? "corrupt")); it was moved to \(record.backupPath) and the partition is bootstrapped again from the server"
        log.error(
            "\(message); the file may be salvaged with `sqlite3 \(record.backupPath) .recover`; unsynced changes in it are not recovered automatically",
            metadata: [
                "message_id": .string(TetherMessageID.storeQuarantined.rawValue), "tether.reset_id": .string(record.id),
                "tether.error_code": .stringConvertible(record.errorCode.rawValue), "tether.backup": .string(record.backupPath),
            ])
        recordError(SyncError(.badClientFile, message, action: .clientReset))
        updateFigures {
            $0.serverVersion = 0
            $0.unsyncedChanges = 0
        }
    }
}
