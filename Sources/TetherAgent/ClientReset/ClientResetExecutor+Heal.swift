import Foundation
import Logging
import TetherProtocol
import TetherStore

extension ClientResetExecutor {
    /// How often one reset fetches the state again for its contribution before it goes on
    /// without healing (a server that keeps forgetting identities, or views healed non-stop).
    static let maxHealRebases = 5

    /// The healing phase of a reset caused by a restored server: offers the backup's view,
    /// compared with the fetched state, to the server (``HealContributor``). The contribution's
    /// id is the reset's, so a restart or a rebase sends the same contribution again. Logs one
    /// line with the outcome and count, never a row.
    ///
    /// Only the server's answer that it wants no view (no heal open, a rollback, a closed heal,
    /// a view outside the window) lets the rewrite drop unsynced updates and deletes of rows the
    /// server's state lacks (recovery rule 2). Whenever the reset does not learn that — the
    /// offer refused before the server could answer it (access revoked meanwhile: 206), or not
    /// made at all — it keeps them: another device's view may still bring those rows back, and
    /// a change of a row that never comes back is ignored by the server, as any update of a row
    /// it deleted is.
    func contributeHeal(_ record: ResetRecord, context: ResetContext, log: Logger) async -> ClientResetCoordinator.Event {
        let staging = context.stagingPath(record)
        if let rebases = record.healRebases, rebases >= Self.maxHealRebases {
            return skipHeal(record, because: "the state was fetched again \(rebases) times for it", log: log)
        }
        guard let fetched = FetchedState.existing(at: staging, partition: record.partition) else {
            log.warning("client reset \(record.id): the fetched server state is gone; fetching it again")
            return .serverStateLost
        }
        let reader: HealViewReader
        do {
            reader = try HealViewReader(
                backup: record.backupPath, staging: staging, recovering: record.strategy == .recover,
                maxChanges: FaultInjection.healChunkRows ?? HealViewReader.maxChanges)
        } catch where error.isTransient {
            return .effectFailed(reason: "reading the view in \(record.backupPath): \(error)")
        } catch {
            return skipHeal(record, because: "its backup cannot be read as a store (\(error))", log: log)
        }
        guard reader.schemasMatch else {
            return skipHeal(record, because: "the server's schema differs from the one the backup was synced with", log: log)
        }
        guard reader.view.version > 0 else { return skipHeal(record, because: "the store had never synced", log: log) }
        guard let contribution = UInt64(record.id, radix: 16) else {
            return skipHeal(record, because: "its id \(record.id) is not 16 hex digits", log: log)
        }
        let view = "view at server version \(reader.view.version)"
        do throws(HealContributionError) {
            switch try await healer.contribute(
                partition: record.partition, contribution: contribution, view: reader.view, fetched: fetched, chunks: reader.chunks())
            {
            case .contributed(let healed):
                log.notice("client reset \(record.id): \(view) contributed to healing the restored server: \(healed) changes healed")
                return .healFinished(healed: healed, contributed: true)
            case .notWanted(let reason):
                log.notice("client reset \(record.id): \(view) not wanted for healing (\(reason)); 0 changes healed")
                return .healFinished(healed: 0)
            case .covered(let reason):
                log.notice(
                    "client reset \(record.id): \(view) not wanted for healing (\(reason)); 0 changes healed; the heal is open, so changes of rows the server lacks are kept")
                return .healFinished(healed: 0, contributed: true)
            case .rebase(let reason):
                log.notice(
                    "client reset \(record.id): \(view) was compared with a state the server has healed since (\(reason)); fetching the state again, 0 changes healed so far")
                PartitionStore.removeFiles(at: staging)
                return .healRebase
            }
        } catch {
            switch error {
            case .transient(let reason): return .effectFailed(reason: "healing: \(reason)")
            case .refused(let reason): return skipHeal(record, because: "the server refused it: \(reason)", log: log)
            }
        }
    }

    /// The reset goes on without healing: 0 changes healed, the reason logged. Whether a heal
    /// is open is not known, so changes of rows the server lacks are kept.
    private func skipHeal(_ record: ResetRecord, because reason: String, log: Logger) -> ClientResetCoordinator.Event {
        log.notice(
            "client reset \(record.id): the store's view is not offered for healing: \(reason); 0 changes healed; a heal may be open, so changes of rows the server lacks are kept")
        return .healFinished(healed: 0, contributed: true)
    }
}

extension ClientResetExecutor {
    /// Step 4 again after a view healed rows: the staging copy is brought up to the server's
    /// latest version with the history written since its download (the heal's writes among
    /// it) rather than downloaded whole a second time. Nil when there is nothing to continue
    /// (no heal yet, or the staging copy is gone) or the server cannot continue it: the state
    /// is then fetched whole. A failure that may pass retries the phase, which tries the
    /// catch-up again from the version the staging copy reached.
    func catchUpAfterHeal(_ record: ResetRecord, context: ResetContext, log: Logger) async -> ClientResetCoordinator.Event? {
        guard let healed = record.healedChanges, healed > 0,
            let fetched = FetchedState.existing(at: context.stagingPath(record), partition: record.partition)
        else { return nil }
        do {
            let caughtUp = try await fetcher.catchUp(fetched, of: record.partition)
            log.notice(
                "client reset \(record.id): server state caught up from version \(fetched.serverVersion.version) to \(caughtUp.serverVersion.version) after healing")
            return .serverStateFetched
        } catch let unavailable as StateCatchUpUnavailable {
            log.notice("client reset \(record.id): the state is fetched again whole after healing: \(unavailable.reason)")
            PartitionStore.removeFiles(at: fetched.path)
            return nil
        } catch SessionInterruption.serverError(let error) where Self.refusalIsFinal(error) || error.action == .deleteStore {
            // The whole fetch meets the refusal too, and answers it as step 4 does.
            log.notice(
                "client reset \(record.id): the server refused to continue the state after healing (error \(error.code.rawValue), \(error.code.name)); fetching it whole")
            return nil
        } catch is CancellationError {
            return .effectFailed(reason: "cancelled")
        } catch {
            return .effectFailed(reason: "catching up with the server's state after healing: \(error)")
        }
    }
}
