import Foundation
import TetherProtocol
import TetherStore

/// Client resets as the controller drives them: ``PartitionResetDriver`` does the work, the
/// controller opens the store and tells the machine (``finished(_:)``, in the controller's
/// main file, also remembers that a bind must confirm the reset).
extension PartitionController {
    var resets: PartitionResetDriver { PartitionResetDriver(settings: settings, context: context, log: log) }

    /// The reset recorded for this partition and not finished, if any, as the state machine
    /// sees it. A store a crash left half quarantined is finished first.
    func lookUpPendingReset() async throws -> PartitionStateMachine.PendingReset? {
        if try resets.activeReset() != nil {
            try await openStoreIfPresent()  // a damaged store is quarantined, which ends the reset
        }
        return try resets.activeReset().map(PartitionStateMachine.PendingReset.init)
    }

    /// Carries out the recorded reset (`initiate`: an operator's go, or the daemon's start).
    func driveRecordedReset(initiate: Bool) async throws -> PartitionStateMachine.ResetEnd {
        guard let record = try resets.activeReset() else { return .done(deleteStore: false) }
        let store = try await openedStore()
        return finished(try await resets.drive(record, store: store, initiate: initiate))
    }

    /// A session answered with a reset-causing error: the reset starts when ``ResetLoopGuard``
    /// allows it. While it must wait, the partition is offline and the loop binds again after
    /// the wait (the server may have been mended meanwhile); a loop becomes a manual reset.
    func resetGuarded(_ error: SyncError) async throws -> PartitionStateMachine.ResetEnd {
        switch try resets.assessRepeat(of: error) {
        case .start(let repeats):
            return try await beginReset(error, repeats: repeats)
        case .wait(let seconds, let reason):
            announceHeldError()
            return .deferred(resets.deferral(of: error, seconds: seconds, reason: reason))
        case .manual(let reason, let repeats):
            return try await beginReset(error, manualBecause: reason, repeats: repeats)
        }
    }

    /// Starts a reset for `error` (docs/contract.md: Sync errors: the reset codes and 206).
    /// `manualBecause`: a manual reset whatever the mode, for that reason (an altered store).
    func beginReset(
        _ error: SyncError, manualBecause: String? = nil, repeats: Int = 0
    ) async throws -> PartitionStateMachine.ResetEnd {
        let store = try await openedStore()
        let started = try await resets.record(
            error, store: store, manualBecause: manualBecause, repeats: repeats,
            recorded: { record in await self.announceHeldError(resetID: record.id) })
        resetStarted(id: started.record.id)
        return finished(try await resets.drive(started.record, store: store, context: started.context))
    }

    /// The delete-store action that emptied this store, when the partition only waits for
    /// access since (its last error is still the 206, nothing was written since): a forced
    /// reset would have nothing to keep and nothing to fetch.
    private func emptiedWaitingForAccess() throws -> String? {
        guard figures.lastError?.code == Int(SyncErrorCode.permissionDenied.rawValue), figures.unsyncedChanges == 0,
            let last = try resets.lastReset(),
            last.strategy == .deleteStore, last.outcome == .deleted
        else { return nil }
        return last.id
    }

    /// `tetherctl reset initiate`: carries out a pending reset, or forces one on a partition
    /// stuck in an error state. Returns the reset's id.
    func initiate() async throws -> String? {
        if let record = try resets.activeReset() {
            initiateRecordedReset()
            return record.id
        }
        await recountWithoutSession()
        if let emptied = try emptiedWaitingForAccess() {
            throw AgentError.nothingToInitiate(
                "the store of \(settings.name) was emptied by delete-store action \(emptied) after access was denied (error 206) and only waits for access: it takes the server's state at its next attempt once access is granted (tether-server admin grant USER \(settings.name) read|readwrite)")
        }
        // Forcing a reset is for a partition stuck in an error state, not a healthy one.
        guard machine.stopReason != nil || (figures.lastError != nil && ![.synced, .syncing].contains(machine.shownState)) else {
            throw AgentError.nothingToInitiate("\(settings.name) is \(status.state.rawValue) with no pending reset and no error to recover from")
        }
        // The error the partition showed when asked (opening the store may record another).
        let lastError = figures.lastError
        let store = try await openedStore()
        // Recorded here, driven by the run loop: the command answers at once, whatever the
        // reset then meets (no connection, access still denied).
        let record = try await resets.recordForced(store: store, lastError: lastError)
        forcedResetRecorded(id: record.id)
        return record.id
    }
}
