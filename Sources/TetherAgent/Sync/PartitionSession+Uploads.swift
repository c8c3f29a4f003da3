import Logging
import TetherProtocol
import TetherStore

extension PartitionSession.Uploads {
    /// Log entries one upload batch holds at most; batches are cut by size first
    /// (`PartitionStore.uploadBatchBytes`, about 512 KiB of values): 4,096 short rows, or one row
    /// of a 1 MiB blob.
    static let batchEntries = 4096

    /// Sends every batch `store` holds after ``cursor`` on `link`, whole (docs/sync-model.md);
    /// `sent` after each one. What went through is kept when a batch fails.
    mutating func sendPending(
        from store: PartitionStore, on link: any LinkSession, sent: () -> Void, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        while let batch = try await store.pendingChanges(after: cursor, limit: Self.batchEntries) {
            if batch.lastSeq > recordedThrough {
                // Recorded before it leaves, up to every seq assigned so far (their changes are
                // fixed): usually one durable write per burst of uploads.
                recordedThrough = try await store.recordUpload(
                    salt: salt, firstSeq: batch.afterSeq + 1, lastSeq: max(batch.lastSeq, try await store.lastAssignedSeq()))
            }
            try await link.upload([batch])
            cursor = batch.lastSeq
            sent()
        }
    }
}

/// A session's uploads: after every commit to the store, once the session is ready.
extension PartitionSession {
    /// Uploads after every commit another process (or the agent) makes to the store, once the
    /// session is ready; ends the session when an application altered the store's tables
    /// (checked at each commit) or the store turned out to be damaged.
    func uploadOnCommits(host: isolated some Host) async -> PartitionStateMachine.SessionEnd? {
        await waitUntilReadyForUploads()
        if Task.isCancelled { return nil }
        let storePath = host.settings.storePath
        let notifier: StoreChangeNotifier
        do {
            notifier = try StoreChangeNotifier(path: storePath)
        } catch {
            // Without it no commit would ever be uploaded: bind again rather than sync half.
            host.log.error("cannot watch the store \(storePath) for commits, binding again: \(error)")
            return .retry(nil)
        }
        defer { notifier.stop() }
        host.log.debug("session ready: uploading what is pending, then after every commit")
        // Each round in a task that ends with it (ShortLivedTask): this loop lives as long as
        // the session.
        if let damage = await ShortLivedTask.run({ await uploadPending(host: host) }) {
            return .storeDamaged(damage)  // committed before the notifier started
        }
        for await _ in notifier {
            let end = await ShortLivedTask.run { () async -> PartitionStateMachine.SessionEnd? in
                if let alteration = await checkStoreSchema(host: host) { return .storeAltered(alteration) }
                if let damage = await uploadPending(host: host) { return .storeDamaged(damage) }
                return nil
            }
            if let end { return end }
            if Task.isCancelled { return nil }
        }
        if Task.isCancelled { return nil }
        // The watcher ended the sequence (it could not watch the store any more): bind again
        // rather than stop uploading.
        host.log.error("stopped watching the store \(host.settings.storePath) for commits, binding again")
        return .retry(nil)
    }

    /// Sends every pending batch not yet sent in this session, whole (docs/sync-model.md).
    /// Returns the error when the store turned out to be damaged.
    @discardableResult
    func uploadPending(host: isolated some Host) async -> StoreError? {
        guard host.uploadsMayFlow, let store = host.store, let link = self.link, access == .readwrite else {
            host.log.debug("no upload now (session not ready, ending, or read-only): counting only")
            await host.recount()
            return nil
        }
        guard claimUploads() else {
            host.log.debug("an upload round is under way: it goes round again after this one")
            return nil
        }
        defer { uploadsStopped() }
        repeat {
            guard var uploads = self.uploads else { return nil }
            do {
                defer { record(uploads) }
                try await uploads.sendPending(from: store, on: link) { progressed() }
                try await host.refreshCounts()
            } catch let error as StoreError where error.isCorruption {
                return error
            } catch {
                host.log.debug("upload stopped: \(error)")
                return nil
            }
            host.log.debug("upload round done: \(host.figures.unsyncedChanges) changes not yet acknowledged")
        } while uploadRoundEnded()
        return nil
    }
}
