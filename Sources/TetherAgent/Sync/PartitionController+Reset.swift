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
        resetWaitsForRunLoop = false
        if try context.stateDatabase.activeReset(partition: settings.name) != nil {
            try await openStoreIfPresent()  // a damaged store is quarantined, which ends the reset
        }
        guard let record = try context.stateDatabase.activeReset(partition: settings.name) else {
            _ = consumeStart()
            if status.pendingReset != nil {
                updateStatus {
                    $0.pendingReset = nil
                    $0.pendingResetReason = nil
                }
            }
            return false
        }
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        // Only a reset that was pending when the daemon started is carried out by the start.
        let atStart = consumeStart()
        updateStatus {
            $0.pendingReset = record.id
            $0.pendingResetReason = record.pendingReason
        }
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

    /// A session answered with a reset-causing error: the reset starts when ``ResetLoopGuard``
    /// allows it. While it must wait, the partition is offline and the loop binds again after
    /// the wait (the server may have been mended meanwhile); a loop becomes a manual reset.
    func resetGuarded(_ error: SyncError) async throws {
        let records = try context.stateDatabase.resets(partition: settings.name)
        let now = Date().timeIntervalSince1970
        switch ResetLoopGuard.assess(error: error, records: records, now: now, limits: context.resetLoopLimits) {
        case .start(let repeats):
            try await beginReset(error, repeats: repeats)
        case .wait(let until, _, let reason):
            let seconds = max(until - now, 0)
            log.warning(
                "\(reason): the client reset of \(settings.name) waits \(Int(seconds.rounded(.up))) s",
                metadata: ["tether.error_code": .stringConvertible(error.code.rawValue)])
            connectionLost()
            await sleepOrWake(.milliseconds(Int64((seconds * 1000).rounded(.up))))
        case .manual(let repeats, let reason):
            log.error(
                "\(reason): the reset of \(settings.name) becomes a manual one; nothing more is reset or backed up until an operator runs `tetherctl reset initiate \(settings.name)`",
                metadata: [
                    "message_id": .string(TetherMessageID.resetLoop.rawValue),
                    "tether.error_code": .stringConvertible(error.code.rawValue),
                ])
            try await beginReset(error, manualBecause: reason, repeats: repeats)
        }
    }

    /// Starts a reset for `error` (docs/contract.md: Sync errors: the reset codes and 206).
    /// `manualBecause`: a manual reset whatever the mode, for that reason (an altered store).
    func beginReset(_ error: SyncError, forced: Bool = false, manualBecause: String? = nil, repeats: Int = 0) async throws {
        try await openStoreIfPresent()
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        setState(.resetting)
        let result = try await executor().begin(
            error: error, store: store, context: await resetContext(), forced: forced, manualBecause: manualBecause, repeats: repeats)
        finished(result)
    }

    /// A bind succeeded: the server accepted the store the last reset produced, so a later
    /// reset-causing error is not a repeat of it (``ResetLoopGuard``). Recorded once per reset.
    func confirmLastReset() throws {
        guard resetAwaitingBind != false else { return }
        defer { resetAwaitingBind = false }
        guard var last = try context.stateDatabase.resets(partition: settings.name).last(where: { !$0.isQuarantine }),
            last.phase == .done, last.confirmedByBind != true
        else { return }
        last.confirmedByBind = true
        try context.stateDatabase.save(last)
    }

    private func finished(_ record: ResetRecord) {
        if record.phase == .done {
            resetAwaitingBind = true
            updateStatus {
                $0.pendingReset = nil
                $0.pendingResetReason = nil
            }
            backoff.reset()
            if record.strategy == .deleteStore {
                // Access was denied: try again later, in case it is granted back (docs/contract.md: Manual resets and delete-store).
                stoppedReason = nil
            }
        } else {
            updateStatus {
                $0.pendingReset = record.id
                $0.pendingResetReason = record.pendingReason
            }
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
        try await openStoreIfPresent()
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        // Recorded here, driven by the run loop: the command answers at once, whatever the
        // reset then meets (no connection, access still denied).
        let record = try await executor().record(error: error, store: store, context: await resetContext(), forced: true)
        stoppedReason = nil
        resetWaitsForRunLoop = true
        updateStatus { $0.pendingReset = record.id }
        setState(.resetting)
        wake()
        return record.id
    }
}
