import Foundation
import Logging
import TetherClient
import TetherControl
import TetherProtocol
import TetherStore

extension PartitionController {
    /// One bind of the partition on `link`, until the session ends; how it ended and how long
    /// it had been bound.
    func syncSession(on link: any PartitionLink) async -> (PartitionStateMachine.SessionEnd, Duration?) {
        let end = await runSession(on: link)
        let boundFor = session?.boundFor
        session = nil
        if case .reset(let error, _) = end, error.action == .deleteStore {
            return (.reset(error, storeEmptied: await storeIsAlreadyEmptied()), boundFor)
        }
        return (end, boundFor)
    }

    private func runSession(on link: any PartitionLink) async -> PartitionStateMachine.SessionEnd {
        downloadEnded(complete: false)  // what an interrupted download left
        let token: String
        do {
            token = try await context.readToken()
        } catch {
            log.error("cannot read the token: \(error)", metadata: ["tether.error_code": "203"])
            return .retry(nil)
        }
        do {
            try await openStoreIfPresent()
        } catch where Task.isCancelled {
            // The connection or the daemon is going away: an open it interrupted says nothing
            // about the store.
            return .connectionLost
        } catch {
            let failure = storeOpener.sessionEnd(forOpenFailure: error)
            // Shown as the partition's last error: a stopped partition always says why.
            if let shown = failure.shown { recordError(shown) }
            return failure.end
        }
        if let alteration = alteredStore { return .storeAltered(alteration) }
        let request: BindRequest
        let uploadSalt: Int64
        switch await BindRequestBuilder(settings: settings, context: context, log: log).request(for: store, token: token) {
        case .request(let built, let salt): (request, uploadSalt) = (built, salt)
        case .ended(let end): return end
        }
        let linkSession: any LinkSession
        do {
            linkSession = try await link.openSession(request)
        } catch {
            return await link.isClosed ? .connectionLost : .retry(nil)
        }
        session = PartitionSession(link: linkSession, uploadSalt: uploadSalt)
        sessionEvent(.bindSent)
        let outcome = await FirstResult.of(
            [
                { @Sendable in await self.processEvents(linkSession) },
                { @Sendable in await self.uploadOnCommits() },
                { @Sendable in
                    // Pause, removal and a forced reset end the session at once (not at its next event).
                    while !Task.isCancelled {
                        await self.waitForWake()
                        if await self.shouldEndSession { return .interrupted }
                    }
                    return nil
                },
            ], otherwise: .connectionLost)
        // The session is over whatever the server answers to the unbind (the connection may
        // be gone already).
        try? await linkSession.unbind()
        return outcome
    }

    private func processEvents(_ linkSession: any LinkSession) async -> PartitionStateMachine.SessionEnd {
        var events = linkSession.events.makeAsyncIterator()
        while let event = await events.next(isolation: #isolation) {
            if shouldEndSession { return .interrupted }
            busySince = .now
            defer { busySince = nil }
            lastProgress = .now
            await FaultInjection.wedgeIfRequested()
            do {
                switch event {
                case .bound(let reply):
                    try await bound(reply, events: &events)
                    if let alteration = await checkStoreSchema() { return .storeAltered(alteration) }
                    await uploadPending()
                case .download(let download):
                    try await apply(download)
                case .error(let error):
                    return handle(error)
                case .unbound:
                    return .retry(nil)
                case .disconnected(let error):
                    if let error, !error.isTransient { await context.connectionFailed(error) }
                    return .connectionLost
                case .state:
                    continue  // only expected while bootstrapping, handled in bound()
                }
            } catch {
                switch SessionFailure(error) {
                case .ends(let end):
                    return end
                case .serverError(let error):
                    return handle(error)
                case .symbolicLink(let error):
                    log.error("syncing of \(settings.name) stops until a reload: \(error); \(error.hint)")
                    recordError(SyncError(.badClientFile, "\(error)", action: .fatal))
                    return .stop(reason: "\(error)")
                case .downloadRefused(let error):
                    log.error("state download of \(settings.name) refused, retrying: \(error); \(error.hint)")
                    downloadRefused(error)
                    return .retry(nil)
                case .other(let error):
                    log.error("sync of \(settings.name) failed: \(error)")
                    return .retry(nil)
                }
            }
        }
        return .connectionLost
    }

    /// The server accepted the bind: bootstrap a new store, or check the schema and go on.
    private func bound(_ reply: BindReply, events: inout SessionEvents.AsyncIterator) async throws {
        sessionEvent(.bound(stateFollows: reply.stateFollows))
        boundElsewhere.bound()
        updateFigures { $0.latestServerVersion = reply.latestServerVersion.version }
        session?.accepted(reply)
        if reply.stateFollows {
            log.notice("bootstrapping \(settings.name) from the server (version \(reply.latestServerVersion.version))")
            let staging = await context.configuration().stateDir + "/staging/\(settings.name)-bootstrap.sqlite"
            let fetched = try await StateDownload.receive(
                reply: reply, events: &events, partition: settings.name, stagingPath: staging, storePath: settings.storePath
            ) { progress in
                self.downloadProgress(progress)
            }
            try await adopt(fetched)
        } else if let store {
            if reply.schema != store.schema {
                let diff = try await store.upgradeSchema(to: reply.schema)
                log.notice("store schema upgraded to version \(reply.schema.version): \(diff.summary.joined(separator: "; "))")
            }
        }
        try await store?.setReadOnly(reply.access == .read)
        do {
            try confirmLastReset()
        } catch {
            // Sync goes on; the cost is that an error before the next bind may be counted as a
            // repeat by the reset-loop guard.
            log.warning("could not record that the server accepted the store after its last reset: \(error)")
        }
        downloadEnded(complete: true)
        session?.becameReady(access: reply.access)
        try await refreshCounts()
        sessionBecameReady()
    }

    /// Makes the live store the downloaded state (``StoreBootstrap``); the store it opened is
    /// kept even when the adoption failed.
    private func adopt(_ fetched: FetchedState) async throws {
        let adoption = await StoreBootstrap(settings: settings, log: log).adopt(fetched, into: store)
        store = adoption.store
        if let failure = adoption.failure { throw failure }
    }

    private func apply(_ download: Download) async throws {
        guard let store else { return }
        try FaultInjection.corruptionIfRequested(store: store.path)
        let report = try await store.apply(download.entries)
        updateFigures { $0.latestServerVersion = max($0.latestServerVersion, download.latestServerVersion) }
        log.trace("applied \(report.changesApplied) changes up to version \(report.serverVersion.version)")
        try await refreshCounts()
    }

    /// Re-reads the counts (for `wait-synced`, and when nothing can be uploaded); a store that
    /// cannot be read now leaves them as they are (the journal says why).
    func recount() async {
        do { try await refreshCounts() } catch {
            log.warning("cannot read the store's version and unsynced count; the status shows the last ones: \(error)")
        }
    }

    /// Without a running session (offline, paused, stopped, waiting for a reset) nothing
    /// re-reads the counts after an application's commit: a status request does, so
    /// `tetherctl status` never shows `0` unsynced changes for a store that holds some. A store
    /// the agent has not opened (a partition paused since the start) is read from its file.
    func recountWithoutSession() async {
        if store != nil { return await recount() }
        let counts: StoreCounts?
        do {
            counts = try StoreCounts.read(fileAt: settings.storePath)
        } catch {
            log.warning("cannot read the version and unsynced count of the store \(settings.storePath); the status shows the last ones: \(error)")
            return
        }
        guard let counts else { return }  // no store yet, or one never synced
        updateFigures(counts.show)
    }

    /// Re-reads the store's version and unsynced count (``StoreCounts``); clears the
    /// reset-cycle marker once the server has acknowledged everything a reset recovered.
    func refreshCounts() async throws {
        guard let store else { return }
        updateFigures(try await StoreCounts.read(store, log: log).show)
    }

    /// What docs/contract.md "Sync errors" says to do about `error` (``SessionErrorVerdict``);
    /// logged once here, with its code and hint.
    private func handle(_ received: SyncError) -> PartitionStateMachine.SessionEnd {
        let error = boundElsewhere.identityTakenElsewhere(received) ?? received
        let verdict = SessionErrorVerdict(error, partition: settings.name)
        recordError(error, heldForItsReset: verdict.heldForItsReset)
        log.log(level: verdict.level, "\(verdict.message)", metadata: verdict.metadata)
        return verdict.end
    }
}
