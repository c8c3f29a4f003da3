import TetherProtocol

/// The client reset of docs/contract.md "Reset steps, Manual resets and delete-store" as a pure state machine.
///
/// It never does I/O: it says which effect to perform next, and the executor reports what
/// happened. The executor persists ``record`` **before** performing each effect, so after a
/// crash ``init(resuming:)`` re-enters the persisted phase and its effect runs again (every
/// effect is idempotent: the backup goes to the same path, hooks re-run with the same
/// `TETHER_RESET_ID`, the rewrite is recognised by a marker in the store).
///
/// ```text
/// recorded ─┬─ automatic ────────────→ backing-up → before-hook → fetching → (healing →) rewriting → after-hook → done
///           └─ manual / delete-store → manual-hook → manual-pending ─(initiate | next start)─┘
/// a delete-store skips fetching: its rewrite empties the store
/// healing: only after 211 or 208 (a restored server); the backup's view is offered to it
/// heal finished (healed, not wanted, refused for good) → rewriting
/// heal rebase (another view was healed since the fetch) → fetching again
/// before-hook failed            → manual-hook (the backup exists; the reset waits for an operator)
/// recovery impossible           → recover: manual-hook; recover-or-discard: rewriting again, discarding
/// an effect failed transiently  → the same phase again, after a backoff
/// staged server state lost      → fetching again (from healing or rewriting)
/// server refused the state       → manual-hook (access denied: waits for an operator)
/// backup reused (a repeat of an unchanged store) → backing-up proceeds without a copy
/// quarantine (a store that is corrupt or not SQLite): quarantining ─(moved)→ done, discarded
/// ```
package struct ClientResetCoordinator: Sendable, Hashable {
    /// The side effect of the current phase.
    package enum Effect: Sendable, Hashable {
        /// Nothing to do: call ``handle(_:now:)`` with `.proceed`.
        case proceed
        case backup(path: String)
        case runHook(HookEvent)
        case fetchServerState
        /// Offer the backup's view to the server, which may heal what a restore lost with it
        /// (docs/client-reset.md "Healing a restored server").
        case contributeHeal
        case rewrite(ResetStrategy)
        /// Move the damaged store (and its companions) to `path`.
        case quarantine(path: String)
        /// Stop: the reset waits for `tetherctl reset initiate` or the next start (`.initiated`).
        case awaitOperator
        /// The reset is over; sync resumes.
        case finished
    }

    package enum Event: Sendable, Hashable {
        case proceed
        case backupCompleted
        /// A hook ran (nil: no hook is configured for that event).
        case hookFinished(HookEvent, HookResult?)
        case serverStateFetched
        /// The contribution is over: `healed` changes the server wrote (0 when it did not want
        /// the view, or refused it for a reason retrying cannot fix); `contributed`: the server
        /// may be healing (it took the view, declined it as covered, or the reset never heard
        /// that it is not), so recovery keeps changes of rows its state lacks. False only when
        /// the server answered that it wants no view.
        case healFinished(healed: Int, contributed: Bool = false)
        /// Another device's view was healed after the state was fetched: fetch it again, then
        /// contribute again (same contribution id).
        case healRebase
        /// The damaged store was moved to the backup path.
        case quarantined
        /// `serverVersion`: the server version the store now carries (nil for a delete-store).
        case rewriteCompleted(recovered: Int, dropped: Int, serverVersion: Int64? = nil)
        /// The recovery rules could not be applied (e.g. recovered changes do not fit the
        /// server's schema). Only valid while rewriting with the recover strategy.
        case recoveryImpossible(reason: String)
        /// An operator ran `tetherctl reset initiate`, or the daemon started again.
        case initiated
        /// The fetched server state is gone (a restart found no complete staging copy): fetch again.
        case serverStateLost
        /// The server refused to send its state for a reason retrying cannot fix (access
        /// denied, a fatal error): the reset waits for an operator instead of retrying for ever.
        case fetchRefused(reason: String)
        /// The effect failed in a way that may pass (disk full, server unreachable): the phase
        /// is retried after a backoff.
        case effectFailed(reason: String)
    }

    package struct InvalidTransition: Error, Sendable, Hashable, CustomStringConvertible {
        package var phase: ResetPhase
        package var event: Event
        package var description: String { "reset event \(event) is not valid in phase \(phase.rawValue)" }
    }

    package private(set) var record: ResetRecord
    /// The last transient failure, for logs and status; cleared by progress.
    package private(set) var lastFailure: String?

    /// A new reset (its record in phase `recorded`).
    package init(new record: ResetRecord) {
        precondition(record.phase == .recorded, "a new reset starts in phase recorded")
        self.record = record
    }

    /// The quarantine of a damaged store: the record (strategy discard, `quarantineReason` set,
    /// backup path = where the store goes) starts in phase `quarantining`.
    package init(quarantine record: ResetRecord) {
        precondition(record.isQuarantine, "a quarantine has a reason")
        var record = record
        record.phase = .quarantining
        record.outcome = .inProgress
        self.record = record
    }

    /// A reset read back from the state database after a restart.
    package init(resuming record: ResetRecord) {
        self.record = record
    }

    /// The effect of the current phase: what the executor performs (again, after a restart).
    package var effect: Effect {
        switch record.phase {
        case .recorded: .proceed
        case .manualHook: .runHook(.manualReset)
        case .manualPending: .awaitOperator
        // A repeated reset of a store unchanged since the previous one reuses its backup.
        case .backingUp: record.backupReusedFrom == nil ? .backup(path: record.backupPath) : .proceed
        case .beforeHook: .runHook(.beforeReset)
        case .fetching: .fetchServerState
        case .healing: .contributeHeal
        case .rewriting: .rewrite(record.strategy)
        case .afterHook: .runHook(.afterReset)
        case .done: .finished
        case .quarantining: .quarantine(path: record.backupPath)
        }
    }

    /// The outcome the after hook reports (`TETHER_RESET_OUTCOME`): `recovered` or `discarded`.
    package var afterHookOutcome: String { record.strategy == .recover ? "recovered" : "discarded" }

    /// Advances on `event`; `now` is seconds since the epoch (injected for tests).
    package mutating func handle(_ event: Event, now: Double) throws(InvalidTransition) {
        let invalid = InvalidTransition(phase: record.phase, event: event)
        if case .effectFailed(let reason) = event {
            guard [.backingUp, .fetching, .healing, .rewriting, .quarantining].contains(record.phase) else { throw invalid }
            lastFailure = reason
            return
        }
        lastFailure = nil
        switch (record.phase, event) {
        case (.recorded, .proceed):
            switch record.strategy {
            case .manual, .deleteStore: record.phase = .manualHook
            case .recover, .discard: record.phase = .backingUp
            }

        case (.manualHook, .hookFinished(.manualReset, let result)):
            appendHook(.manualReset, result, now)
            record.phase = .manualPending
            record.outcome = .manualPending

        case (.manualPending, .initiated):
            record.phase = .backingUp
            record.outcome = .inProgress

        case (.backingUp, .backupCompleted):
            record.phase = .beforeHook

        case (.backingUp, .proceed) where record.backupReusedFrom != nil:
            record.phase = .beforeHook

        case (.beforeHook, .hookFinished(.beforeReset, let result)):
            appendHook(.beforeReset, result, now)
            if let result, !result.isSuccess {
                if record.strategy != .deleteStore {
                    record.strategy = .manual
                }
                record.fallbackReason = "before_hook failed (\(result.summary))"
                record.phase = .manualHook
            } else {
                // A delete-store has nothing to fetch (access is denied): it empties the store.
                record.phase = record.strategy == .deleteStore ? .rewriting : .fetching
            }

        case (.quarantining, .quarantined):
            record.phase = .done
            record.outcome = .discarded
            record.finishedAt = now
        case (.fetching, .serverStateFetched):
            // A heal already finished (the state fetched again after it) is not offered again.
            record.phase = heals && record.healedChanges == nil ? .healing : .rewriting

        case (.healing, .healFinished(let healed, let contributed)):
            record.healedChanges = healed
            record.viewContributed = contributed
            // The server now holds rows the fetched state lacks (the view's): fetch it again,
            // so the rewrite puts them in the store at once. Rewritten to the state before the
            // heal, the store would lack them until the next download, and an application's
            // update or delete of such a row in between would find nothing to change.
            record.phase = healed > 0 ? .fetching : .rewriting

        case (.healing, .healRebase):
            record.healRebases = (record.healRebases ?? 0) + 1
            record.phase = .fetching

        case (.healing, .serverStateLost):
            record.phase = .fetching

        case (.fetching, .fetchRefused(let reason)):
            // Waits for an operator, and keeps its strategy: carried out once access is back,
            // a recovering reset still recovers (becoming a manual one would discard the
            // unsynced changes into the backup — soak seed 690124173: a revoke right after a
            // restore cost a device 53 changes when the campaign initiated it after the grant).
            record.fallbackReason = "the server refused to send its state: \(reason)"
            record.phase = .manualHook

        case (.rewriting, .rewriteCompleted(let recovered, let dropped, let serverVersion)):
            record.resultServerVersion = serverVersion
            if record.strategy == .recover {
                record.recoveredChanges = recovered
                record.droppedChanges = dropped
            }
            record.phase = .afterHook

        case (.rewriting, .serverStateLost) where record.strategy != .deleteStore:
            record.phase = .fetching

        case (.rewriting, .recoveryImpossible(let reason)) where record.strategy == .recover:
            record.fallbackReason = "recovery impossible: \(reason)"
            record.strategy = ResetPolicy.afterRecoveryFailure(mode: record.mode)
            record.phase = record.strategy == .manual ? .manualHook : .rewriting

        case (.afterHook, .hookFinished(.afterReset, let result)):
            appendHook(.afterReset, result, now)
            record.phase = .done
            record.finishedAt = now
            record.outcome = switch record.strategy {
            case .recover: .recovered
            case .discard: .discarded
            case .manual: .manualDone
            case .deleteStore: .deleted
            }

        default:
            throw invalid
        }
    }

    /// Whether the reset offers its view for healing: it was caused by a restore of the server
    /// (211: the store synced past the server's history; 208: its client file is unknown to the
    /// server) or by a store that went back in time or was copied (209, 210: it may have synced
    /// inside a window a restore lost, and learns whether a heal is open), and keeps the
    /// store's data (a delete-store has nothing to offer).
    var heals: Bool {
        let causes: Set<SyncErrorCode> = [.divergingHistories, .badClientFileIdentifier, .badServerVersion, .badClientVersion]
        return causes.contains(record.errorCode) && record.strategy != .deleteStore
    }

    private mutating func appendHook(_ event: HookEvent, _ result: HookResult?, _ now: Double) {
        guard let result else { return }
        record.hooks.append(ResetRecord.HookRun(event: event, result: result, finishedAt: now))
    }
}
