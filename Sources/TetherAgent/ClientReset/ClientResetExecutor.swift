import Foundation
import Logging
import TetherControl
import TetherProtocol
import TetherStore

/// What a reset needs to know about its partition and the agent.
package struct ResetContext: Sendable {
    package var partition: PartitionSettings
    package var stateDir: String
    package var serverURL: String

    package init(partition: PartitionSettings, stateDir: String, serverURL: String) {
        self.partition = partition
        self.stateDir = stateDir
        self.serverURL = serverURL
    }

    /// Where step 4 downloads the server's state: `<state_dir>/staging/<partition>-<id>.sqlite`.
    func stagingPath(_ record: ResetRecord) -> String {
        "\(stateDir)/staging/\(record.partition)-\(record.id).sqlite"
    }
}

/// Performs the effects the ``ClientResetCoordinator`` asks for — backup, hooks, fetching the
/// server's state, rewriting the store — persisting the record in the state database before
/// each one, so that a restart at any instant resumes the reset (docs/contract.md: Reset steps).
package struct ClientResetExecutor: Sendable {
    let stateDatabase: AgentStateDatabase
    let hooks: HookRunner
    let fetcher: any ServerStateFetcher
    let healer: any HealContributor
    let logger: Logger
    let now: @Sendable () -> Double
    /// Waits before an effect that failed transiently is tried again (`attempt` counts from 1).
    let pause: @Sendable (_ attempt: Int) async throws -> Void
    /// Where the reset's phases, outcome and hook runs are announced (`tetherctl events`).
    let events: AgentEvents?

    package init(
        stateDatabase: AgentStateDatabase, hooks: HookRunner = HookRunner(), fetcher: any ServerStateFetcher, healer: any HealContributor,
        logger: Logger,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        pause: (@Sendable (Int) async throws -> Void)? = nil, events: AgentEvents? = nil
    ) {
        self.events = events
        self.stateDatabase = stateDatabase
        self.hooks = hooks
        self.fetcher = fetcher
        self.healer = healer
        self.logger = logger
        self.now = now
        self.pause = pause ?? { attempt in
            var backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))
            for _ in 1..<attempt { _ = backoff.next() }
            try await Task.sleep(for: backoff.next())
        }
    }

    /// Step 1: chooses the strategy and the backup path and saves the record (phase
    /// `recorded`); ``drive(_:store:context:initiate:)`` carries it out. The partition's run
    /// loop drives it after telling its state machine the reset started; `reset initiate`
    /// records a forced reset and answers at once, whatever the reset then meets.
    /// - Parameter forced: `tetherctl reset initiate` on a partition stuck in an error state.
    /// - Parameter manualBecause: a manual reset whatever the mode, for this reason (a store
    ///   whose tables an application altered).
    /// - Parameter repeats: what ``ResetLoopGuard`` counted (resets before this one that ended
    ///   without a successful bind in between); a repeat on an unchanged store reuses the
    ///   previous reset's backup instead of writing another copy of the same data.
    /// - Parameter recorded: called once the record is saved, before its first phase is
    ///   announced: the error that caused it is announced first, with the reset's id.
    package func record(
        error: SyncError, store: PartitionStore, context: ResetContext, forced: Bool = false, manualBecause: String? = nil,
        repeats: Int = 0, recorded: (@Sendable (ResetRecord) async -> Void)? = nil
    ) async throws -> ResetRecord {
        let metadata = try await store.metadata()
        let decision = manualBecause.map { ResetPolicy.Decision(strategy: .manual, fallbackReason: $0) }
            ?? ResetPolicy.decide(
                mode: context.partition.reset.mode, error: error, unacknowledgedReset: metadata.clientResetMarker, forcedByOperator: forced)
        let id = ResetRecord.newID()
        let startedAt = now()
        var record = ResetRecord(
            id: id, partition: context.partition.name, error: error,
            mode: context.partition.reset.mode, strategy: decision.strategy, fallbackReason: decision.fallbackReason,
            backupPath: ResetRecord.backupPath(
                recoveryDir: context.partition.reset.recoveryDir, partition: context.partition.name, id: id, at: startedAt),
            startedAt: startedAt)
        record.loopRepeats = repeats
        record.cause = LineageCause(error)
        record.storeClientFile = metadata.clientFile?.id
        if repeats > 0, decision.strategy != .deleteStore,
            let previous = try await unchangedSincePrevious(store, serverVersion: metadata.serverVersion.version, partition: record.partition)
        {
            record.backupPath = previous.backupPath
            record.backupReusedFrom = previous.backupReusedFrom ?? previous.id
        }
        record.phase = .recorded
        try stateDatabase.save(record)
        await recorded?(record)
        announcePhase(record, storePath: context.partition.storePath)
        let log = logger(for: record)
        if let cause = record.cause {
            log.error(
                "\(cause.prefix): partition \(record.partition) resets (\(decision.strategy.rawValue)) to get a new identity and the server's state: \(error.message)",
                metadata: ["message_id": .string(TetherMessageID.storeLineage.rawValue), "tether.cause": .string(cause.rawValue)])
        }
        let messageID: TetherMessageID = decision.strategy == .deleteStore ? .permissionDenied : .resetStarted
        log.error(
            "client reset \(id) of \(record.partition) started after error \(error.code.rawValue) (\(error.code.name)): \(decision.strategy.rawValue)\(decision.fallbackReason.map { ", because \($0)" } ?? "")",
            metadata: ["message_id": .string(messageID.rawValue), "tether.reset_strategy": .string(decision.strategy.rawValue)])
        return record
    }

    /// Drives `record` until it is done or waits for an operator, and returns it as persisted.
    /// `initiate` carries out a pending manual reset or delete-store action.
    /// `store`: nil only for a quarantine (the damaged store is closed before it is moved).
    package func drive(_ record: ResetRecord, store: PartitionStore?, context: ResetContext, initiate: Bool = false) async throws -> ResetRecord {
        var coordinator = ClientResetCoordinator(resuming: record)
        let log = logger(for: record)
        if initiate && coordinator.record.phase == .manualPending {
            try coordinator.handle(.initiated, now: now())
            log.notice("client reset \(record.id) of \(record.partition) initiated")
        }
        if let superseded = try await supersededRecord(coordinator.record, store: store, context: context, log: log) {
            return superseded
        }
        var failures = 0
        var prefetched = false
        while true {
            try stateDatabase.save(coordinator.record)  // the phase is on disk before its effect starts
            switch coordinator.effect {
            case .finished:
                if !coordinator.record.isQuarantine { finish(coordinator.record, context: context, log: log) }
                events?.emit(AgentEvent(
                    .resetOutcome, partition: record.partition.rawValue, code: coordinator.record.errorCode.rawValue,
                    resetID: record.id, outcome: coordinator.record.outcome.rawValue, cause: coordinator.record.cause?.rawValue,
                    healedChanges: coordinator.record.healedChanges, storePath: context.partition.storePath,
                    backupPath: coordinator.record.backupPath))
                return coordinator.record
            case .awaitOperator:
                return coordinator.record
            default:
                break
            }
            await FaultInjection.resetGate(coordinator.record.phase.rawValue)
            let event = await perform(coordinator, store: store, context: context, log: log, prefetched: &prefetched)
            // The daemon is stopping: what the effect reported (a hook killed with it, say) is not
            // its outcome. The phase stays as persisted and runs again at the next start.
            try Task.checkCancellation()
            if case .effectFailed(let reason) = event {
                failures += 1
                log.warning("client reset \(record.id) phase \(coordinator.record.phase.rawValue) failed (attempt \(failures)), retrying: \(reason)")
                try await pause(failures)
            } else {
                failures = 0
            }
            let before = coordinator.record
            try coordinator.handle(event, now: now())
            if before.phase == .backingUp && coordinator.record.phase != .backingUp {
                announceBackup(coordinator.record, storePath: context.partition.storePath)
            }
            if coordinator.record.phase != before.phase { announcePhase(coordinator.record, storePath: context.partition.storePath) }
            if coordinator.record.phase == .manualHook && before.phase != .manualHook {
                log.error(
                    "client reset \(record.id) of \(record.partition) waits for an operator: \(coordinator.record.fallbackReason ?? (coordinator.record.strategy == .deleteStore ? "access was denied (delete-store action)" : "the partition's mode is manual")); run `tetherctl reset initiate \(record.partition)` or restart tetherd",
                    metadata: ["message_id": .string(TetherMessageID.resetFellBackToManual.rawValue)])
            }
        }
    }

    private func perform(
        _ coordinator: ClientResetCoordinator, store: PartitionStore?, context: ResetContext, log: Logger, prefetched: inout Bool
    ) async -> ClientResetCoordinator.Event {
        let record = coordinator.record
        if case .quarantine(let path) = coordinator.effect { return quarantine(record, to: path, context: context, log: log) }
        guard let store else { return .effectFailed(reason: "the store is not open") }
        switch coordinator.effect {
        case .proceed:
            if coordinator.record.phase == .backingUp, let reused = coordinator.record.backupReusedFrom {
                log.notice(
                    "client reset \(record.id): the store has not changed since reset \(reused) finished; its backup \(record.backupPath) stands for this one",
                    metadata: ["tether.backup": .string(record.backupPath)])
            }
            return .proceed
        case .backup(let path):
            guard Self.fetchesDuringBackup(record, context), !prefetched else {
                return await backup(record, to: path, store: store, context: context, log: log)
            }
            // Nothing runs between the backup and the fetch (no before-reset hook), and the
            // fetch touches only its staging file: the download overlaps the copy.
            async let fetch = fetchServerState(record, context: context, log: log, reportingRefusal: false)
            let backedUp = await backup(record, to: path, store: store, context: context, log: log)
            prefetched = await fetch == .serverStateFetched
            return backedUp
        case .runHook(let event):
            return .hookFinished(event, await runHook(event, coordinator, context: context, log: log))
        case .fetchServerState:
            if prefetched, FetchedState.existing(at: context.stagingPath(record), partition: record.partition) != nil {
                prefetched = false
                return .serverStateFetched
            }
            return await fetchServerState(record, context: context, log: log)
        case .contributeHeal:
            return await contributeHeal(record, context: context, log: log)
        case .rewrite(let strategy):
            return await rewrite(strategy, record: record, store: store, context: context, log: log)
        case .awaitOperator, .finished, .quarantine:
            return .proceed  // not reached: drive() returns before performing these, quarantine above
        }
    }

    /// Whether step 4's download starts with step 2's backup: only when no before-reset hook
    /// runs between them (it may need the backup, or change what the reset meets) and the
    /// reset goes straight on (recover or discard; a manual reset waits for an operator).
    static func fetchesDuringBackup(_ record: ResetRecord, _ context: ResetContext) -> Bool {
        context.partition.reset.beforeHook == nil && (record.strategy == .recover || record.strategy == .discard)
    }

    private func backup(_ record: ResetRecord, to path: String, store: PartitionStore, context: ResetContext, log: Logger) async
        -> ClientResetCoordinator.Event
    {
        do {
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            let clock = ContinuousClock()
            let started = clock.now
            let copy = try await store.backup(to: path, mode: 0o640)  // the mode set through the descriptor, no chmod(path)
            let seconds = started.duration(to: clock.now).seconds
            log.notice(
                "client reset \(record.id): store backed up to \(path) in \(String(format: "%.3f", seconds)) s (\(copy.bytes) bytes copied by \(copy.method.name))",
                metadata: ["tether.backup": .string(path)])
            // keep_backups holds as soon as the new backup exists, not only when the reset ends.
            pruneBackups(of: record.partition, keep: context.partition.reset.keepBackups, log: log)
            return .backupCompleted
        } catch {
            return .effectFailed(reason: "backup to \(path): \(error)")
        }
    }

    /// Step 4. `reportingRefusal`: false for the download that overlaps the backup (a refusal
    /// is met, and logged, again when the fetch phase itself runs).
    private func fetchServerState(_ record: ResetRecord, context: ResetContext, log: Logger, reportingRefusal: Bool = true) async
        -> ClientResetCoordinator.Event
    {
        if let caughtUp = await catchUpAfterHeal(record, context: context, log: log) { return caughtUp }
        do {
            let staging = context.stagingPath(record)
            try FileManager.default.createDirectory(atPath: (staging as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            let fetched = try await fetcher.fetchState(of: record.partition, into: staging)
            log.notice("client reset \(record.id): server state fetched at version \(fetched.serverVersion.version)")
            return .serverStateFetched
        } catch is CancellationError {
            return .effectFailed(reason: "cancelled")
        } catch SessionInterruption.serverError(let error) where error.action == .deleteStore {
            // Access denied (206): an operator is expected to give it back, and the reset —
            // forced, or caused by a restore — completes then, keeping its strategy; until then
            // the phase is retried with backoff (the partition's last error shows the refusal).
            return .effectFailed(
                reason: "access denied: error \(error.code.rawValue) (\(error.code.name)): \(error.message); the state download is retried until access is granted")
        } catch SessionInterruption.serverError(let error) where Self.refusalIsFinal(error) {
            guard reportingRefusal else { return .fetchRefused(reason: "") }
            log.error("client reset \(record.id): the server refused to send its state: error \(error.code.rawValue) (\(error.code.name)): \(error.message)")
            return .fetchRefused(reason: "error \(error.code.rawValue) (\(error.code.name)): \(error.message)")
        } catch {
            return .effectFailed(reason: "fetching the server's state: \(error)")
        }
    }

    /// A refusal retrying cannot fix: a fatal or reset-causing error (not a transient one, nor
    /// a token the operator may be fixing; access denied, which an operator grants back, is
    /// caught before).
    static func refusalIsFinal(_ error: SyncError) -> Bool {
        switch error.action {
        case .retry, .reauth: false
        case .fatal, .clientReset, .clientResetNoRecovery, .deleteStore: true
        }
    }

    private func runHook(_ event: HookEvent, _ coordinator: ClientResetCoordinator, context: ResetContext, log: Logger) async -> HookResult? {
        let settings = context.partition.reset
        let path: String? = switch event {
        case .beforeReset: settings.beforeHook
        case .afterReset: settings.afterHook
        case .manualReset: settings.manualHook
        case .syncError: nil  // never a reset step
        }
        guard let path else { return nil }
        let outcome: String? = switch event {
        case .beforeReset: nil
        case .afterReset: coordinator.afterHookOutcome
        case .manualReset: "manual"
        case .syncError: nil
        }
        let invocation = HookInvocation(
            event: event, executable: path,
            environment: HookInvocation.environment(
                for: event, record: coordinator.record, storePath: context.partition.storePath, serverURL: context.serverURL, outcome: outcome),
            workingDirectory: context.stateDir, timeout: .seconds(settings.hookTimeoutSeconds))
        let result = await hooks.run(invocation, logger: log)
        return report(result, event: event, path: path, record: coordinator.record, log: log)
    }

    private func report(_ result: HookResult, event: HookEvent, path: String, record: ResetRecord, log: Logger) -> HookResult {
        events?.emit(AgentEvent(
            .hook, partition: record.partition.rawValue, resetID: record.id, outcome: result.outcomeName, hook: event.rawValue,
            exitStatus: result.exitStatus))
        if result.isSuccess {
            log.info("hook \(event.rawValue) \(path) succeeded", metadata: ["tether.hook": .string(event.rawValue)])
        } else {
            let consequence = switch event {
            case .beforeReset: "the reset becomes a manual reset"
            case .afterReset: "recorded; the data stays reset"
            case .manualReset: "the reset still waits for an operator"
            case .syncError: "sync is not affected"
            }
            log.error(
                "hook \(event.rawValue) \(path) failed (\(result.summary)): \(consequence)",
                metadata: ["message_id": .string(TetherMessageID.hookFailed.rawValue), "tether.hook": .string(event.rawValue)])
        }
        return result
    }

    /// A `reset-backup` event: the backup of the store exists now (written, or a previous
    /// reset's standing for it), before anything of the reset touches the store.
    private func announceBackup(_ record: ResetRecord, storePath: String) {
        events?.emit(AgentEvent(
            .resetBackup, partition: record.partition.rawValue, code: record.errorCode.rawValue, message: record.strategy.rawValue,
            resetID: record.id, phase: ResetPhase.backingUp.rawValue, cause: record.cause?.rawValue, storePath: storePath,
            backupPath: record.backupPath))
    }

    /// A `reset-phase` event: the phase the record is in now, with its strategy, the store and
    /// its backup.
    private func announcePhase(_ record: ResetRecord, storePath: String) {
        events?.emit(AgentEvent(
            .resetPhase, partition: record.partition.rawValue, code: record.errorCode.rawValue,
            message: record.strategy.rawValue + (record.fallbackReason.map { ", because \($0)" } ?? ""), resetID: record.id,
            phase: record.phase.rawValue, cause: record.cause?.rawValue, storePath: storePath, backupPath: record.backupPath))
    }
}
