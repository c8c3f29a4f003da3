import Foundation
import Logging
import TetherSyncClient
import TetherControl
import TetherProtocol
import TetherStore

/// One bind of a partition, from its request to the session's end: reads the token, opens the
/// store, binds, then races the session's events, its uploads and an interruption
/// (``FirstResult``). The control flow of a session lives here; its state stays in the
/// ``PartitionController`` every function takes as an `isolated` parameter, so each step runs
/// on the controller's actor exactly as a method of it would (no extra hops, no reentrancy
/// beyond the awaits written here).
enum PartitionSessionLoop {
    /// One bind of the partition on `link`, until the session ends; how it ended and how long
    /// it had been bound.
    static func sync(_ controller: isolated PartitionController, on link: any PartitionLink) async -> (PartitionStateMachine.SessionEnd, Duration?) {
        let end = await run(controller, on: link)
        let boundFor = controller.session?.boundFor
        controller.session = nil
        if case .reset(let error, _) = end, error.action == .deleteStore {
            return (.reset(error, storeEmptied: await storeIsAlreadyEmptied(controller)), boundFor)
        }
        return (end, boundFor)
    }

    private static func run(_ controller: isolated PartitionController, on link: any PartitionLink) async -> PartitionStateMachine.SessionEnd {
        controller.downloadEnded(complete: false)  // what an interrupted download left
        let token: String
        do {
            token = try await controller.context.readToken()
        } catch {
            controller.log.error("cannot read the token: \(error)", metadata: ["tether.error_code": "203"])
            return .retry(nil)
        }
        do {
            try await controller.openStoreIfPresent()
        } catch where Task.isCancelled {
            // The connection or the daemon is going away: an open it interrupted says nothing
            // about the store.
            return .connectionLost
        } catch {
            let failure = controller.storeOpener.sessionEnd(forOpenFailure: error)
            // Shown as the partition's last error: a stopped partition always says why.
            if let shown = failure.shown { controller.recordError(shown) }
            return failure.end
        }
        if let alteration = controller.store?.alteration { return .storeAltered(alteration) }
        let request: BindRequest
        let uploadSalt: Int64
        let builder = BindRequestBuilder(settings: controller.settings, context: controller.context, log: controller.log)
        switch await builder.request(for: controller.store, token: token) {
        case .request(let built, let salt): (request, uploadSalt) = (built, salt)
        case .ended(let end): return end
        }
        let linkSession: any LinkSession
        do {
            linkSession = try await link.openSession(request)
        } catch {
            return await link.isClosed ? .connectionLost : .retry(nil)
        }
        controller.session = PartitionSession(link: linkSession, uploadSalt: uploadSalt)
        controller.sessionEvent(.bindSent)
        let outcome = await FirstResult.of(
            [
                { @Sendable in await processEvents(controller, linkSession) },
                { @Sendable in await uploadOnCommits(controller) },
                { @Sendable in
                    // Pause, removal and a forced reset end the session at once (not at its next event).
                    while !Task.isCancelled {
                        await controller.waitForWake()
                        if await controller.shouldEndSession { return .interrupted }
                    }
                    return nil
                },
            ], otherwise: .connectionLost)
        // The session is over whatever the server answers to the unbind (the connection may
        // be gone already).
        try? await linkSession.unbind()
        return outcome
    }

    private static func processEvents(_ controller: isolated PartitionController, _ linkSession: any LinkSession) async -> PartitionStateMachine.SessionEnd {
        var events = linkSession.events.makeAsyncIterator()
        while let event = await events.next(isolation: #isolation) {
            if controller.shouldEndSession { return .interrupted }
            controller.busySince = .now
            defer { controller.busySince = nil }
            controller.lastProgress = .now
            await FaultInjection.wedgeIfRequested()
            do {
                switch event {
                case .bound(let reply):
                    try await bound(controller, reply, events: &events)
                    if let alteration = await checkStoreSchema(controller) { return .storeAltered(alteration) }
                    await uploadPending(controller)
                case .download(let download):
                    try await apply(controller, download)
                case .error(let error):
                    return handle(controller, error)
                case .unbound:
                    return .retry(nil)
                case .disconnected(let error):
                    if let error, !error.isTransient { await controller.context.connectionFailed(error) }
                    return .connectionLost
                case .state:
                    continue  // only expected while bootstrapping, handled in bound()
                case .healed:
                    continue  // answers heal chunks, which only a reset's heal session sends
                }
            } catch {
                let name = controller.settings.name
                switch SessionFailure(error) {
                case .ends(let end):
                    return end
                case .serverError(let error):
                    return handle(controller, error)
                case .symbolicLink(let error):
                    controller.log.error("syncing of \(name) stops until a reload: \(error); \(error.hint)")
                    controller.recordError(SyncError(.badClientFile, "\(error)", action: .fatal))
                    return .stop(reason: "\(error)")
                case .downloadRefused(let error):
                    controller.log.error("state download of \(name) refused, retrying: \(error); \(error.hint)")
                    controller.downloadRefused(error)
                    return .retry(nil)
                case .other(let error):
                    controller.log.error("sync of \(name) failed: \(error)")
                    return .retry(nil)
                }
            }
        }
        return .connectionLost
    }

    /// The server accepted the bind: bootstrap a new store, or check the schema and go on.
    private static func bound(
        _ controller: isolated PartitionController, _ reply: BindReply, events: inout SessionEvents.AsyncIterator
    ) async throws {
        controller.sessionEvent(.bound(stateFollows: reply.stateFollows))
        controller.boundElsewhere.bound()
        controller.updateFigures {
            $0.latestServerVersion = reply.latestServerVersion.version
            $0.clientFile = reply.identity.id
        }
        controller.session?.accepted(reply)
        if reply.stateFollows {
            controller.log.notice("bootstrapping \(controller.settings.name) from the server (version \(reply.latestServerVersion.version))")
            let staging = StoreBootstrap.stagingPath(stateDir: await controller.context.configuration().stateDir, partition: controller.settings.name)
            let settings = controller.settings
            let fetched = try await StateDownload.receive(
                reply: reply, events: &events, partition: settings.name, stagingPath: staging, storePath: settings.storePath
            ) { progress in
                controller.downloadProgress(progress)
            }
            // The store the bootstrap opened is kept even when the adoption failed.
            let adoption = await StoreBootstrap(settings: settings, log: controller.log).adopt(fetched, into: controller.store)
            controller.store = adoption.store
            if let failure = adoption.failure { throw failure }
        } else if let store = controller.store {
            if reply.schema != store.schema {
                let diff = try await store.upgradeSchema(to: reply.schema)
                controller.log.notice("store schema upgraded to version \(reply.schema.version): \(diff.summary.joined(separator: "; "))")
            }
        }
        try await controller.store?.setReadOnly(reply.access == .read)
        do {
            try controller.confirmLastReset()
        } catch {
            // Sync goes on; the cost is that an error before the next bind may be counted as a
            // repeat by the reset-loop guard.
            controller.log.warning("could not record that the server accepted the store after its last reset: \(error)")
        }
        controller.downloadEnded(complete: true)
        controller.session?.becameReady(access: reply.access)
        try await controller.refreshCounts()
        // The machine learns the session is ready; its uploads start.
        controller.sessionEvent(.sessionReady(caughtUp: controller.figures.isCaughtUp))
        controller.readySignal.signal()
    }

    private static func apply(_ controller: isolated PartitionController, _ download: Download) async throws {
        guard let store = controller.store else { return }
        try FaultInjection.corruptionIfRequested(store: store.path)
        let report = try await store.apply(download.entries)
        controller.updateFigures { $0.latestServerVersion = max($0.latestServerVersion, download.latestServerVersion) }
        controller.log.trace("applied \(report.changesApplied) changes up to version \(report.serverVersion.version)")
        try await controller.refreshCounts()
        // Caught up with the server's downloads (local changes may still wait for their upload).
        let figures = controller.figures
        controller.reporter.applied(report, caughtUp: figures.serverVersion >= figures.latestServerVersion, partition: controller.settings.name)
    }

    /// After every commit: an application's schema change is noticed here (`PRAGMA
    /// schema_version` moved). Returns the alteration when the tables no longer match.
    static func checkStoreSchema(_ controller: isolated PartitionController) async -> StoreError? {
        guard let store = controller.store else { return nil }
        return await controller.storeOpener.checkSchema(of: store)
    }

    /// True for a store a delete-store action emptied: no identity and nothing unsynced. When
    /// the store cannot be read, false: the reset that follows says why in the journal.
    private static func storeIsAlreadyEmptied(_ controller: isolated PartitionController) async -> Bool {
        guard let store = controller.store else { return false }
        return await controller.storeOpener.isAlreadyEmptied(store)
    }

    /// What docs/contract.md "Sync errors" says to do about `error` (``SessionErrorVerdict``);
    /// logged once here, with its code and hint.
    private static func handle(_ controller: isolated PartitionController, _ received: SyncError) -> PartitionStateMachine.SessionEnd {
        let error = controller.boundElsewhere.identityTakenElsewhere(received) ?? received
        let verdict = SessionErrorVerdict(error, partition: controller.settings.name)
        controller.recordError(error, heldForItsReset: verdict.heldForItsReset)
        controller.log.log(level: verdict.level, "\(verdict.message)", metadata: verdict.metadata)
        return verdict.end
    }
}
