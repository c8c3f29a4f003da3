import Foundation
import TetherProtocol
import TetherStore

/// A store that is corrupt, not SQLite, or whose tables an application altered
/// (docs/client-reset.md, "Damaged and altered stores"): ``PartitionStoreOpener`` opens and
/// checks, ``PartitionResetDriver`` records and moves; the controller owns the store.
extension PartitionController {
    var storeOpener: PartitionStoreOpener { PartitionStoreOpener(settings: settings, log: log) }

    /// Opens the store file if there is one and none is open: a corrupt one is quarantined
    /// (the partition then bootstraps from the server as a new store would), an altered one is
    /// opened as it is and its `alteration` says what differs (a manual reset follows).
    func openStoreIfPresent() async throws {
        guard store == nil else { return }
        try await completePendingQuarantines()
        switch try await storeOpener.open() {
        case .opened(let opened): adopt(opened)
        case .damaged(let error): try await quarantine(because: error)
        }
    }

    /// The store, opened first if it is not (``openStoreIfPresent()``); an error when there is
    /// none to act on (no file, or an empty one).
    func openedStore() async throws -> PartitionStore {
        try await openStoreIfPresent()
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        return store
    }

    /// Starts the manual reset of a store whose tables an application altered: recorded with
    /// its backup path, the manual hook runs, the store stays readable and writable but does
    /// not sync until `tetherctl reset initiate` or the next start (docs/contract.md: Manual resets and delete-store).
    func beginAlteredStoreReset(_ alteration: StoreError) async throws -> PartitionStateMachine.ResetEnd {
        if let active = try resets.activeReset() { return .waitsForOperator(.init(active)) }
        let error = resets.alteredStoreError(alteration)
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
            storeOpener.closeDamaged(store)
            adopt(nil)
        }
        try await completeQuarantine(try await resets.recordQuarantine(because: problem))
    }

    /// Finishes quarantines a crash interrupted (the store file, or part of it, still in place).
    func completePendingQuarantines() async throws {
        for record in try resets.pendingQuarantines() { try await completeQuarantine(record) }
    }

    private func completeQuarantine(_ pending: ResetRecord) async throws {
        let (id, error) = try await resets.completeQuarantine(pending)
        recordError(error, resetID: id)
        updateFigures(StoreCounts(serverVersion: 0, unsyncedChanges: 0).show)  // the store is gone
    }
}
