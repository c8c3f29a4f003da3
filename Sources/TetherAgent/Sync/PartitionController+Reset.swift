import Foundation
import Logging
import TetherProtocol
import TetherStore

extension PartitionController {
    private func executor() -> ClientResetExecutor {
        ClientResetExecutor(stateDatabase: context.stateDatabase, fetcher: context.fetcher, logger: log)
    }

    private func resetContext() async -> ResetContext {
        let configuration = await context.configuration()
        return ResetContext(partition: settings, stateDir: configuration.stateDir, serverURL: configuration.server.url)
    }

    /// Continues a reset recorded for this partition, if any; true when one was handled.
    func continueReset() async throws -> Bool {
        if try context.stateDatabase.activeReset(partition: settings.name) != nil {
            try await openStoreIfPresent()  // a damaged store is quarantined, which ends the reset
        }
        guard let record = try context.stateDatabase.activeReset(partition: settings.name) else {
            _ = consumeStart()
            if status.pendingReset != nil { updateStatus { $0.pendingReset = nil } }
            return false
        }
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        // Only a reset that was pending when the daemon started is carried out by the start.
        let atStart = consumeStart()
        updateStatus { $0.pendingReset = record.id }
        var initiate = false
        if record.phase == .manualPending {
            guard takeInitiateRequest(atStart: atStart) else {
                setState(.resetPending)
                await waitForWake()
                return true
            }
            initiate = true
        }
        setState(.resetting)
        let result = try await executor().drive(record, store: store, context: await resetContext(), initiate: initiate)
        finished(result)
        return true
    }

    /// Starts a reset for `error` (docs/contract.md: Sync errors: the reset codes and 206).
    /// `manualBecause`: a manual reset whatever the mode, for that reason (an altered store).
    func beginReset(_ error: SyncError, forced: Bool = false, manualBecause: String? = nil) async throws {
        try await openStoreIfPresent()
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        setState(.resetting)
        let result = try await executor().begin(
            error: error, store: store, context: await resetContext(), forced: forced, manualBecause: manualBecause)
        finished(result)
    }

    private func finished(_ record: ResetRecord) {
        if record.phase == .done {
            updateStatus { $0.pendingReset = nil }
            backoff.reset()
            if record.strategy == .deleteStore {
                // Access was denied: try again later, in case it is granted back (docs/contract.md: Manual resets and delete-store).
                stoppedReason = nil
            }
        } else {
            updateStatus { $0.pendingReset = record.id }
            setState(.resetPending)
        }
        // The run loop may be waiting (a stopped partition forced by `reset initiate`): let it
        // look at the new state.
        wake()
    }

    /// `tetherctl reset initiate`: carries out a pending reset, or forces one on a partition
    /// stuck in an error state. Returns the reset's id.
    func initiate() async throws -> String? {
        if let record = try context.stateDatabase.activeReset(partition: settings.name) {
            requestInitiate()
            return record.id
        }
        // Forcing a reset is for a partition stuck in an error state, not a healthy one.
        guard stoppedReason != nil || (status.lastError != nil && ![.synced, .syncing].contains(status.state)) else {
            throw AgentError.nothingToInitiate("\(settings.name) is \(status.state.rawValue) with no pending reset and no error to recover from")
        }
        let code = status.lastError.map { SyncErrorCode($0.code) } ?? .otherSessionError
        let error = SyncError(code, "reset forced by the operator (tetherctl reset initiate)", action: .clientReset)
        stoppedReason = nil
        try await beginReset(error, forced: true)
        return try context.stateDatabase.resets(partition: settings.name).last?.id
    }
}
