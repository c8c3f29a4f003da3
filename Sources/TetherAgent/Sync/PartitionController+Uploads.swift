import Logging
import TetherProtocol
import TetherStore

/// A session's uploads: after every commit to the store, once the session is ready.
extension PartitionController {
    /// Uploads after every commit another process (or the agent) makes to the store, once the
    /// session is ready; ends the session when an application altered the store's tables
    /// (checked at each commit) or the store turned out to be damaged.
    func uploadOnCommits() async -> PartitionStateMachine.SessionEnd? {
        while !machine.sessionReady {
            await readySignal.wait()
            if Task.isCancelled { return nil }
        }
        let notifier: StoreChangeNotifier
        do {
            notifier = try StoreChangeNotifier(path: settings.storePath)
        } catch {
            // Without it no commit would ever be uploaded: bind again rather than sync half.
            log.error("cannot watch the store \(settings.storePath) for commits, binding again: \(error)")
            return .retry(nil)
        }
        defer { notifier.stop() }
        if let damage = await uploadPending() { return .storeDamaged(damage) }  // committed before the notifier started
        for await _ in notifier {
            if let alteration = await checkStoreSchema() { return .storeAltered(alteration) }
            if let damage = await uploadPending() { return .storeDamaged(damage) }
            if Task.isCancelled { return nil }
        }
        if Task.isCancelled { return nil }
        // The watcher ended the sequence (it could not watch the store any more): bind again
        // rather than stop uploading.
        log.error("stopped watching the store \(settings.storePath) for commits, binding again")
        return .retry(nil)
    }

    /// Sends every pending batch not yet sent in this session, whole (docs/sync-model.md).
    /// Returns the error when the store turned out to be damaged.
    @discardableResult
    func uploadPending() async -> StoreError? {
        guard machine.sessionReady, !machine.sessionShouldEnd, let store, let link = session?.link, session?.access == .readwrite else {
            await recount()
            return nil
        }
        guard session?.claimUploads() == true else { return nil }
        defer { session?.uploadsStopped() }
        repeat {
            guard var uploads = session?.uploads else { return nil }
            do {
                defer { session?.record(uploads) }
                try await uploads.sendPending(from: store, on: link) { lastProgress = .now }
                try await refreshCounts()
            } catch let error as StoreError where error.isCorruption {
                return error
            } catch {
                log.debug("upload stopped: \(error)")
                return nil
            }
        } while session?.uploadRoundEnded() == true
        return nil
    }
}
