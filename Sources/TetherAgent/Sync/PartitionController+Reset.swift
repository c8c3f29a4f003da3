import Foundation
import Logging
import TetherProtocol
import TetherStore

extension PartitionController {
    func executor() -> ClientResetExecutor {
        ClientResetExecutor(stateDatabase: context.stateDatabase, fetcher: context.fetcher, logger: log, events: context.events)
    }

    func resetContext() async -> ResetContext {
        let configuration = await context.configuration()
        return ResetContext(partition: settings, stateDir: configuration.stateDir, serverURL: configuration.server.url)
    }

    /// The reset recorded for this partition and not finished, if any, as the state machine
    /// sees it. A store a crash left half quarantined is finished first.
    func lookUpPendingReset() async throws -> PartitionStateMachine.PendingReset? {
        if try context.stateDatabase.activeReset(partition: settings.name) != nil {
            try await openStoreIfPresent()  // a damaged store is quarantined, which ends the reset
        }
        return try context.stateDatabase.activeReset(partition: settings.name).map(PartitionStateMachine.PendingReset.init)
    }

    /// Carries out the recorded reset (`initiate`: an operator's go, or the daemon's start).
    func driveRecordedReset(initiate: Bool) async throws -> PartitionStateMachine.ResetEnd {
        guard let record = try context.stateDatabase.activeReset(partition: settings.name) else { return .done(deleteStore: false) }
        try await openStoreIfPresent()
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        let result = try await executor().drive(record, store: store, context: await resetContext(), initiate: initiate)
        return finished(result)
    }

    /// A session answered with a reset-causing error: the reset starts when ``ResetLoopGuard``
    /// allows it. While it must wait, the partition is offline and the loop binds again after
    /// the wait (the server may have been mended meanwhile); a loop becomes a manual reset.
    func resetGuarded(_ error: SyncError) async throws -> PartitionStateMachine.ResetEnd {
        let records = try context.stateDatabase.resets(partition: settings.name)
        let now = Date().timeIntervalSince1970
        switch ResetLoopGuard.assess(error: error, records: records, now: now, limits: context.resetLoopLimits) {
        case .start(let repeats):
            return try await beginReset(error, repeats: repeats)
        case .wait(let until, _, let reason):
            announceHeldError()
            let seconds = max(until - now, 0)
            log.warning(
                "\(reason): the client reset of \(settings.name) waits \(Int(seconds.rounded(.up))) s",
                metadata: ["tether.error_code": .stringConvertible(error.code.rawValue)])
            return .deferred(.milliseconds(Int64((seconds * 1000).rounded(.up))))
        case .manual(let repeats, let reason):
            log.error(
                "\(reason): the reset of \(settings.name) becomes a manual one; nothing more is reset or backed up until an operator runs `tetherctl reset initiate \(settings.name)`",
                metadata: [
                    "message_id": .string(TetherMessageID.resetLoop.rawValue),
                    "tether.error_code": .stringConvertible(error.code.rawValue),
                ])
            return try await beginReset(error, manualBecause: reason, repeats: repeats)
        }
    }

    /// Starts a reset for `error` (docs/contract.md: Sync errors: the reset codes and 206).
    /// `manualBecause`: a manual reset whatever the mode, for that reason (an altered store).
    func beginReset(
        _ error: SyncError, manualBecause: String? = nil, repeats: Int = 0
    ) async throws -> PartitionStateMachine.ResetEnd {
        try await openStoreIfPresent()
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        let context = await resetContext()
        let record = try await executor().record(
            error: error, store: store, context: context, manualBecause: manualBecause, repeats: repeats,
            recorded: { record in await self.announceHeldError(resetID: record.id) })
        sessionEvent(.resetStarted(id: record.id))
        return finished(try await executor().drive(record, store: store, context: context))
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

    /// How a reset step ended, for the state machine.
    private func finished(_ record: ResetRecord) -> PartitionStateMachine.ResetEnd {
        guard record.phase == .done else { return .waitsForOperator(PartitionStateMachine.PendingReset(record)) }
        resetAwaitingBind = true
        return .done(deleteStore: record.strategy == .deleteStore)
    }

    /// True for a store a delete-store action emptied: no identity and nothing unsynced. When
    /// the store cannot be read, false: the reset that follows says why in the journal.
    func storeIsAlreadyEmptied() async -> Bool {
        guard let store else { return false }
        do {
            guard try await store.metadata().clientFile == nil else { return false }
            return try await store.pendingChangeCount() == 0
        } catch {
            log.warning("cannot read whether the store \(settings.storePath) was already emptied by a delete-store action: \(error)")
            return false
        }
    }

    /// `tetherctl reset initiate`: carries out a pending reset, or forces one on a partition
    /// stuck in an error state. Returns the reset's id.
    func initiate() async throws -> String? {
        if let record = try context.stateDatabase.activeReset(partition: settings.name) {
            requestInitiate()
            return record.id
        }
        // Forcing a reset is for a partition stuck in an error state, not a healthy one.
        guard machine.stopReason != nil || (figures.lastError != nil && ![.synced, .syncing].contains(machine.shownState)) else {
            throw AgentError.nothingToInitiate("\(settings.name) is \(status.state.rawValue) with no pending reset and no error to recover from")
        }
        let code = figures.lastError.map { SyncErrorCode($0.code) } ?? .otherSessionError
        let error = SyncError(code, "reset forced by the operator (tetherctl reset initiate)", action: .clientReset)
        try await openStoreIfPresent()
        guard let store else { throw StoreError.notAStore(path: settings.storePath) }
        // Recorded here, driven by the run loop: the command answers at once, whatever the
        // reset then meets (no connection, access still denied).
        let record = try await executor().record(error: error, store: store, context: await resetContext(), forced: true)
        recordForcedReset(record.id)
        return record.id
    }
}

extension PartitionStateMachine.PendingReset {
    init(_ record: ResetRecord) {
        self.init(id: record.id, waitsForOperator: record.phase == .manualPending, reason: record.pendingReason)
    }
}
