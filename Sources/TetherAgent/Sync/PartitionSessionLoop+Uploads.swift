import Logging
import TetherProtocol
import TetherStore

/// A session's uploads: after every commit to the store, once the session is ready.
extension PartitionSessionLoop {
    /// Uploads after every commit another process (or the agent) makes to the store, once the
    /// session is ready; ends the session when an application altered the store's tables
    /// (checked at each commit) or the store turned out to be damaged.
    static func uploadOnCommits(_ controller: isolated PartitionController) async -> PartitionStateMachine.SessionEnd? {
        while !controller.machine.sessionReady {
            await controller.readySignal.wait()
            if Task.isCancelled { return nil }
        }
        let notifier: StoreChangeNotifier
        do {
            notifier = try StoreChangeNotifier(path: controller.settings.storePath)
        } catch {
            // Without it no commit would ever be uploaded: bind again rather than sync half.
            controller.log.error("cannot watch the store \(controller.settings.storePath) for commits, binding again: \(error)")
            return .retry(nil)
        }
        defer { notifier.stop() }
        controller.log.debug("session ready: uploading what is pending, then after every commit")
        if let damage = await uploadPending(controller) { return .storeDamaged(damage) }  // committed before the notifier started
        for await _ in notifier {
            if let alteration = await checkStoreSchema(controller) { return .storeAltered(alteration) }
            if let damage = await uploadPending(controller) { return .storeDamaged(damage) }
            if Task.isCancelled { return nil }
        }
        if Task.isCancelled { return nil }
        // The watcher ended the sequence (it could not watch the store any more): bind again
        // rather than stop uploading.
        controller.log.error("stopped watching the store \(controller.settings.storePath) for commits, binding again")
        return .retry(nil)
    }

    /// Sends every pending batch not yet sent in this session, whole (docs/sync-model.md).
    /// Returns the error when the store turned out to be damaged.
    @discardableResult
    static func uploadPending(_ controller: isolated PartitionController) async -> StoreError? {
        let machine = controller.machine
        guard machine.sessionReady, !machine.sessionShouldEnd, let store = controller.store, let link = controller.session?.link,
            controller.session?.access == .readwrite
        else {
            controller.log.debug("no upload now (session not ready, ending, or read-only): counting only")
            await controller.recount()
            return nil
        }
        guard controller.session?.claimUploads() == true else {
            controller.log.debug("an upload round is under way: it goes round again after this one")
            return nil
        }
        defer { controller.session?.uploadsStopped() }
        repeat {
            guard var uploads = controller.session?.uploads else { return nil }
            do {
                defer { controller.session?.record(uploads) }
                try await uploads.sendPending(from: store, on: link) { controller.lastProgress = .now }
                try await controller.refreshCounts()
            } catch let error as StoreError where error.isCorruption {
                return error
            } catch {
                controller.log.debug("upload stopped: \(error)")
                return nil
            }
            controller.log.debug("upload round done: \(controller.figures.unsyncedChanges) changes not yet acknowledged")
        } while controller.session?.uploadRoundEnded() == true
        return nil
    }
}
