import Foundation
import Logging
import TetherControl
import TetherProtocol
import TetherStore

extension ClientResetExecutor {
    /// A reset resumed from the state database whose store has moved on: before the rewrite, the
    /// store carries neither the identity it had when the reset started nor the one the reset
    /// fetched. Only a state database restored from an older copy (or a store file from another
    /// time) gets there; carrying the reset out would rewrite a healthy store and, in discard
    /// mode, drop its unsynced changes. The record is closed as `superseded` instead, and sync
    /// goes on (a store that is really behind is caught by the server's lineage check).
    func supersededRecord(_ record: ResetRecord, store: PartitionStore?, context: ResetContext, log: Logger) async throws -> ResetRecord? {
        let beforeRewrite: Set<ResetPhase> = [.recorded, .manualHook, .manualPending, .backingUp, .beforeHook, .fetching, .healing, .rewriting]
        guard beforeRewrite.contains(record.phase), let started = record.storeClientFile, let store,
            let current = try await store.metadata().clientFile?.id, current != started,
            current != FetchedState.existing(at: context.stagingPath(record), partition: record.partition)?.identity.id
        else { return nil }
        var closed = record
        closed.phase = .done
        closed.outcome = .superseded
        closed.finishedAt = now()
        try stateDatabase.save(closed)
        logger(for: closed).warning(
            "client reset \(record.id) of \(record.partition) is not carried out: the store has another sync identity than when the reset started (client file \(current), was \(started)); the state database is older than the store (restored from a copy?)")
        events?.emit(AgentEvent(
            .resetOutcome, partition: record.partition.rawValue, code: record.errorCode.rawValue, resetID: record.id,
            outcome: closed.outcome.rawValue, cause: record.cause?.rawValue, storePath: context.partition.storePath,
            backupPath: record.backupPath))
        return closed
    }
}
