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
        try await completePendingQuarantines()
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
            try? opened.close()  // given up on: the check's error says why
            throw error
        }
        guard problems.isEmpty else {
            try? opened.close()  // given up on: it is quarantined
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
        recordError(error, heldForItsReset: true)
        return try await beginReset(error, manualBecause: "an application altered the store's schema (\(alteration.schemaAlterationSummary))")
    }

    // MARK: Quarantine

    /// Moves the damaged store to `<recovery_dir>/<partition>/<UTC time>-quarantine-<id>.sqlite`
    /// through the reset machinery: recorded (phase `quarantining`, strategy discard, the
    /// backup is that file), moved, done. A crash at any point is finished by
    /// ``completePendingQuarantines()`` at the next open.
    func quarantine(because problem: StoreError) async throws {
        if let store {
            do { try store.close() } catch {
                log.warning("closing the damaged store \(settings.storePath) failed (it is moved aside anyway): \(error)")
            }
            self.store = nil
        }
        let record = try executor().recordQuarantine(because: problem, context: await resetContext())
        try await completeQuarantine(record)
    }

    /// Finishes quarantines a crash interrupted (the store file, or part of it, still in place).
    /// A record written by an earlier version (phase done, outcome in-progress) is resumed too.
    func completePendingQuarantines() async throws {
        for record in try context.stateDatabase.resets(partition: settings.name)
        where record.isQuarantine && record.outcome == .inProgress {
            try await completeQuarantine(ClientResetCoordinator(quarantine: record).record)
        }
    }

    private func completeQuarantine(_ pending: ResetRecord) async throws {
        let record = try await executor().drive(pending, store: nil, context: await resetContext())
        let error = SyncError(
            .badClientFile,
            "store \(settings.storePath) is damaged (\(record.quarantineReason ?? "corrupt")); it was moved to \(record.backupPath) and the partition is bootstrapped again from the server",
            action: .clientReset)
        recordError(error, resetID: record.id)
        updateFigures {
            $0.serverVersion = 0
            $0.unsyncedChanges = 0
        }
    }
}
