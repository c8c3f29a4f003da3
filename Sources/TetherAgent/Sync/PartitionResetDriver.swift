import Foundation
import Logging
import TetherProtocol
import TetherStore

/// What a partition's client resets and quarantines need beyond the controller's state: the
/// records in the state database, the ``ClientResetExecutor`` that carries them out, the
/// reset-loop guard's decision and what is logged about it. Made from the current settings at
/// each use; the ``PartitionController`` opens the store, hands it in, and applies the results
/// to its state and its machine.
struct PartitionResetDriver: Sendable {
    /// When a reset-causing error's reset may start (``ResetLoopGuard``).
    enum LoopGuardDecision: Sendable, Equatable {
        case start(repeats: Int)
        /// Not yet: the partition is offline `seconds`, then binds again.
        case wait(seconds: Double, reason: String)
        /// A loop: a manual reset, for `reason` (already logged).
        case manual(reason: String, repeats: Int)
    }

    let settings: PartitionSettings
    let context: any AgentContext
    let log: Logger

    var executor: ClientResetExecutor {
        ClientResetExecutor(
            stateDatabase: context.stateDatabase, fetcher: context.fetcher, healer: context.healer, logger: log, events: context.events)
    }

    func resetContext() async -> ResetContext {
        let configuration = await context.configuration()
        return ResetContext(partition: settings, stateDir: configuration.stateDir, serverURL: configuration.server.url)
    }

    /// The reset recorded for this partition and not finished, if any.
    func activeReset() throws -> ResetRecord? { try context.stateDatabase.activeReset(partition: settings.name) }

    /// Carries out `record` on `store` (`initiate`: an operator's go, or the daemon's start).
    func drive(_ record: ResetRecord, store: PartitionStore, context resetContext: ResetContext? = nil, initiate: Bool = false) async throws -> ResetRecord {
        let resetContext = if let resetContext { resetContext } else { await self.resetContext() }
        return try await executor.drive(record, store: store, context: resetContext, initiate: initiate)
    }

    /// What ``ResetLoopGuard`` says about a reset for `error`, given the partition's records;
    /// a loop that becomes a manual reset is logged here.
    func assessRepeat(of error: SyncError) throws -> LoopGuardDecision {
        let records = try context.stateDatabase.resets(partition: settings.name)
        let now = Date().timeIntervalSince1970
        switch ResetLoopGuard.assess(error: error, records: records, now: now, limits: context.resetLoopLimits) {
        case .start(let repeats):
            return .start(repeats: repeats)
        case .wait(let until, _, let reason):
            return .wait(seconds: max(until - now, 0), reason: reason)
        case .manual(let repeats, let reason):
            log.error(
                "\(reason): the reset of \(settings.name) becomes a manual one; nothing more is reset or backed up until an operator runs `tetherctl reset initiate \(settings.name)`",
                metadata: [
                    "message_id": .string(TetherMessageID.resetLoop.rawValue),
                    "tether.error_code": .stringConvertible(error.code.rawValue),
                ])
            return .manual(reason: reason, repeats: repeats)
        }
    }

    /// Logs that the reset for `error` waits `seconds` (``LoopGuardDecision/wait(seconds:reason:)``);
    /// returns how long the partition stays offline.
    func deferral(of error: SyncError, seconds: Double, reason: String) -> Duration {
        log.warning(
            "\(reason): the client reset of \(settings.name) waits \(Int(seconds.rounded(.up))) s",
            metadata: ["tether.error_code": .stringConvertible(error.code.rawValue)])
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Records a reset for `error` on `store` (see ``ClientResetExecutor/record(error:store:context:forced:manualBecause:repeats:recorded:)``);
    /// the record and the context to drive it with.
    func record(
        _ error: SyncError, store: PartitionStore, manualBecause: String?, repeats: Int, recorded: @escaping @Sendable (ResetRecord) async -> Void
    ) async throws -> (record: ResetRecord, context: ResetContext) {
        let context = await resetContext()
        let record = try await executor.record(
            error: error, store: store, context: context, manualBecause: manualBecause, repeats: repeats, recorded: recorded)
        return (record, context)
    }

    /// The partition's last reset (quarantines aside), if any.
    func lastReset() throws -> ResetRecord? {
        try context.stateDatabase.resets(partition: settings.name).last(where: { !$0.isQuarantine })
    }

    /// Records the store's last finished reset as accepted by a bind (``ResetLoopGuard``).
    func markLastResetConfirmed() throws {
        guard var last = try lastReset(),
            last.phase == .done, last.confirmedByBind != true
        else { return }
        last.confirmedByBind = true
        try context.stateDatabase.save(last)
    }

    /// The reset-causing error for a store whose tables an application altered; logged here
    /// with what the operator must do.
    func alteredStoreError(_ alteration: StoreError) -> SyncError {
        let error = SyncError(
            .badClientFile, "an application altered the store's schema: \(alteration)", action: .clientReset,
            hint: "applications must not change a store's tables (docs/contract.md: Partitions and stores); the reset backs the store up and rewrites it to the server's schema and state")
        log.error(
            "\(alteration); syncing of \(settings.name) stops and a manual client reset is recorded; fix the application, then run `tetherctl reset initiate \(settings.name)` (the store is backed up first; unsynced changes stay in the backup)",
            metadata: ["tether.error_code": .stringConvertible(error.code.rawValue)])
        return error
    }

    /// Records a reset the operator forced (`tetherctl reset initiate` on a partition stuck in
    /// an error state), for the partition's last error code.
    func recordForced(store: PartitionStore, lastError: PartitionStatusRow.LastError?) async throws -> ResetRecord {
        let code = lastError.map { SyncErrorCode($0.code) } ?? .otherSessionError
        let error = SyncError(code, "reset forced by the operator (tetherctl reset initiate)", action: .clientReset)
        return try await executor.record(error: error, store: store, context: await resetContext(), forced: true)
    }

    // MARK: Quarantine

    /// Records the quarantine of a damaged store (phase `quarantining`, strategy discard).
    func recordQuarantine(because problem: StoreError) async throws -> ResetRecord {
        try executor.recordQuarantine(because: problem, context: await resetContext())
    }

    /// Quarantines a crash interrupted (the store file, or part of it, still in place). A
    /// record written by an earlier version (phase done, outcome in-progress) is resumed too.
    func pendingQuarantines() throws -> [ResetRecord] {
        try context.stateDatabase.resets(partition: settings.name)
            .filter { $0.isQuarantine && $0.outcome == .inProgress }
            .map { ClientResetCoordinator(quarantine: $0).record }
    }

    /// Moves the damaged store aside; the quarantine's id and the error the partition shows.
    func completeQuarantine(_ pending: ResetRecord) async throws -> (id: String, error: SyncError) {
        let record = try await executor.drive(pending, store: nil, context: await resetContext())
        let error = SyncError(
            .badClientFile,
            "store \(settings.storePath) is damaged (\(record.quarantineReason ?? "corrupt")); it was moved to \(record.backupPath) and the partition is bootstrapped again from the server",
            action: .clientReset)
        return (record.id, error)
    }
}

extension PartitionStateMachine.PendingReset {
    init(_ record: ResetRecord) {
        self.init(id: record.id, waitsForOperator: record.phase == .manualPending, reason: record.pendingReason)
    }
}
