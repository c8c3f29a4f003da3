import Logging
import TetherProtocol
import TetherStore

/// What a bound session does with the two messages of subscriptions (protocol 9, issue 51):
/// the chunks that change the rows a store holds, and the notices of compensating writes.
extension PartitionSession {
    /// Applies one chunk of a subscription change to the store (``PartitionStore/applySubscriptionChunk(_:finalSet:)``):
    /// the last one records the set the bind asked for. The next chunk is granted once this one
    /// is committed (``SessionEvents``), as for downloads. A chunk for another set than the one
    /// asked for is refused: the session ends and the next bind asks again.
    func applySubscriptionChunk(_ chunk: SubscriptionChunk, host: isolated some Host) async throws {
        guard let store = host.store else { return }
        let wanted = subscriptions.wanted
        let report = try await store.applySubscriptionChunk(chunk, finalSet: wanted)
        progressed()
        host.log.trace("subscription change: \(report.changesApplied) rows written, \(report.changesSkipped) skipped")
        if chunk.isLast {
            host.log.notice(
                "subscriptions of \(host.settings.name) in effect (digest \(SubscriptionSet.digestText(of: subscriptions.held)) → \(SubscriptionSet.digestText(of: wanted)))")
            host.subscriptionsPending(false)
        }
        try await host.applied(report, latestServerVersion: chunk.serverVersion.version)
    }

    /// Records the compensating writes of a notice once (error 231): a notice for a version the
    /// store already holds was recorded when it came first (or its reverts are applied) and is
    /// ignored. Each write is logged (table and key, never values), announced as a
    /// `compensating-write` event, counted in the status and given to the error hook. Sync goes
    /// on: the reverts come in the download that follows.
    func recordCompensatingWrites(_ notice: CompensatingWrites, host: isolated some Host) async throws {
        guard let store = host.store else { return }
        let current = try await store.metadata().serverVersion
        guard notice.serverVersion.version > current.version else {
            host.log.debug("compensating writes at version \(notice.serverVersion.version) already recorded (store at \(current.version))")
            return
        }
        for write in notice.writes {
            host.log.warning(
                "a change to \(write.table) was reverted by the server (\(write.reason)): \(write.message)",
                metadata: [
                    "tether.error_code": "\(SyncErrorCode.compensatingWrite.rawValue)", "tether.table": .string(write.table),
                    "tether.key": .string(write.key.text), "tether.reason": .string(write.reason.description),
                ])
        }
        host.compensated(notice)
    }
}
