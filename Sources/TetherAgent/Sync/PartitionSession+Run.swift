import Foundation
import Logging
import TetherSyncClient
import TetherControl
import TetherProtocol
import TetherStore

/// One bind's control flow: reads the token, opens the store, binds, then races the session's
/// events, its uploads and an interruption (``FirstResult``). Each function takes its host as
/// an `isolated` parameter, so each step runs on the host's actor as a method of it would (no
/// reentrancy beyond the awaits written here; one hop into and out of each short-lived task);
/// what it needs of the partition is the narrow ``Host``, what it keeps of the bind is in the
/// session.
extension PartitionSession {
    /// One bind of the partition on `link`, until the session ends; how it ended. The opening
    /// (the token, the store, the bind request) runs in a task that ends with it, as does each
    /// event's and each commit's work below (``ShortLivedTask``): the tasks that wait for the
    /// session's events and commits live as long as it, and would otherwise keep the stack of
    /// the deepest store access or bind they ever made.
    func run(on link: any PartitionLink, host: isolated some Host) async -> PartitionStateMachine.SessionEnd {
        let linkSession: any LinkSession
        switch await ShortLivedTask.run({ await self.open(on: link, host: host) }) {
        case .opened(let opened): linkSession = opened
        case .ended(let end): return end
        }
        let outcome = await FirstResult.of(
            [
                { @Sendable in await processEvents(linkSession, host: host) },
                { @Sendable in await uploadOnCommits(host: host) },
                { @Sendable in
                    // Pause, removal and a forced reset end the session at once (not at its next event).
                    while !Task.isCancelled {
                        await host.waitForWake()
                        if await host.shouldEndSession { return .interrupted }
                    }
                    return nil
                },
            ], otherwise: .connectionLost)
        // The session is over whatever the server answers to the unbind (the connection may
        // be gone already).
        try? await linkSession.unbind()
        if case .reset(let error, _) = outcome, error.action == .deleteStore {
            return .reset(error, storeEmptied: await ShortLivedTask.run { await self.storeIsAlreadyEmptied(host: host) })
        }
        return outcome
    }

    /// How the opening of a bind ended: the bind sent, or the session's end without one.
    private enum Opening: Sendable {
        case opened(any LinkSession)
        case ended(PartitionStateMachine.SessionEnd)
    }

    /// Reads the token, opens the store and sends the bind.
    private func open(on link: any PartitionLink, host: isolated some Host) async -> Opening {
        host.downloadEnded(complete: false)  // what an interrupted download left
        let token: String
        do {
            token = try await host.context.readToken()
        } catch {
            host.log.error("cannot read the token: \(error)", metadata: ["tether.error_code": "203"])
            return .ended(.retry(nil))
        }
        let opener = PartitionStoreOpener(settings: host.settings, log: host.log)
        do {
            try await host.openStoreIfPresent()
        } catch where Task.isCancelled {
            // The connection or the daemon is going away: an open it interrupted says nothing
            // about the store.
            return .ended(.connectionLost)
        } catch {
            let failure = opener.sessionEnd(forOpenFailure: error)
            // Shown as the partition's last error: a stopped partition always says why.
            if let shown = failure.shown { host.show(shown, heldForItsReset: false) }
            return .ended(failure.end)
        }
        if let alteration = host.store?.alteration { return .ended(.storeAltered(alteration)) }
        let request: BindRequest
        let uploadSalt: Int64
        let builder = BindRequestBuilder(settings: host.settings, context: host.context, log: host.log)
        switch await builder.request(for: host.store, token: token) {
        case .request(let built, let salt): (request, uploadSalt) = (built, salt)
        case .ended(let end): return .ended(end)
        }
        let linkSession: any LinkSession
        do {
            linkSession = try await link.openSession(request)
        } catch {
            return .ended(await link.isClosed ? .connectionLost : .retry(nil))
        }
        opened(linkSession, uploadSalt: uploadSalt, subscriptions: request.subscriptions ?? .whole, token: token)
        host.bindSent()
        return .opened(linkSession)
    }

    private func processEvents(
        _ linkSession: any LinkSession, host: isolated some Host
    ) async -> PartitionStateMachine.SessionEnd {
        var events = linkSession.events.makeAsyncIterator()
        while let event = await events.next(isolation: #isolation) {
            if host.shouldEndSession { return .interrupted }
            eventStarted()
            defer { eventHandled() }
            await FaultInjection.wedgeIfRequested()
            do {
                switch event {
                case .bound(let reply):
                    // A bootstrap reads the state's chunks from this loop's events, so it runs
                    // here; what follows it, and each download, runs in a task that ends.
                    try await bound(reply, events: &events, host: host)
                    let alteration = await ShortLivedTask.run { () async -> StoreError? in
                        if let alteration = await checkStoreSchema(host: host) { return alteration }
                        await uploadPending(host: host)
                        return nil
                    }
                    if let alteration { return .storeAltered(alteration) }
                case .download(let download):
                    try await ShortLivedTask.run { try await apply(download, host: host) }
                case .error(let error):
                    return await end(with: SessionInterruption.serverError(error), host: host)
                case .unbound:
                    return .retry(nil)
                case .disconnected(let error):
                    if let error, !error.isTransient { await host.context.connectionFailed(error) }
                    return .connectionLost
                case .state:
                    continue  // only expected while bootstrapping, handled in bound()
                case .healed:
                    continue  // answers heal chunks, which only a reset's heal session sends
                case .subscriptionChunk(let chunk):
                    try await ShortLivedTask.run { try await applySubscriptionChunk(chunk, host: host) }
                case .compensatingWrites(let notice):
                    try await ShortLivedTask.run { try await recordCompensatingWrites(notice, host: host) }
                }
            } catch {
                return await end(with: error, host: host)
            }
        }
        return .connectionLost
    }

    /// Every error of the session — the server's, or thrown while handling an event — ends
    /// here: judged by ``SessionErrorVerdict`` (a 108 that lasted too long first becomes the
    /// reset it stands for), shown as the partition's last error, logged once.
    private func end(with error: any Error, host: isolated some Host) async -> PartitionStateMachine.SessionEnd {
        var error = error
        if case SessionInterruption.serverError(let received) = error, let taken = host.identityTakenElsewhere(received) {
            error = SessionInterruption.serverError(taken)
        }
        if case SessionInterruption.serverError(let received) = error, received.code == .badUserAuthentication, let token {
            await host.context.credentialRefused(token)
        }
        let verdict = SessionErrorVerdict(error, partition: host.settings.name)
        if let shown = verdict.shown { host.show(shown, heldForItsReset: verdict.heldForItsReset) }
        if let entry = verdict.entry { host.log.log(level: entry.level, "\(entry.message)", metadata: entry.metadata) }
        return verdict.end
    }

    /// The server accepted the bind: bootstrap a new store, or check the schema and go on.
    private func bound(
        _ reply: BindReply, events: inout SessionEvents.AsyncIterator, host: isolated some Host
    ) async throws {
        host.bound(reply)
        accepted(reply)
        if let token { await host.context.credentialAccepted(token) }
        let settings = host.settings
        if reply.stateFollows {
            host.log.notice("bootstrapping \(settings.name) from the server (version \(reply.latestServerVersion.version))")
            let staging = StoreBootstrap.stagingPath(stateDir: await host.context.configuration().stateDir, partition: settings.name)
            let fetched = try await StateDownload.receive(
                reply: reply, events: &events, partition: settings.name, stagingPath: staging, storePath: settings.storePath,
                subscriptions: subscriptions.wanted
            ) { progress in
                host.downloadProgress(progress)
            }
            // The store the bootstrap opened is kept even when the adoption failed.
            let adoption = await StoreBootstrap(settings: settings, log: host.log).adopt(fetched, into: host.store)
            host.adopt(adoption.store)
            if let failure = adoption.failure { throw failure }
            host.subscriptionsPending(false)
        } else if let store = host.store {
            // A bound store whose set differs is changed by subscription chunks, after this.
            host.subscriptionsPending(subscriptions.held != subscriptions.wanted)
            if reply.schema != store.schema {
                let diff = try await store.upgradeSchema(to: reply.schema)
                host.log.notice("store schema upgraded to version \(reply.schema.version): \(diff.summary.joined(separator: "; "))")
            }
        }
        try await host.store?.setReadOnly(reply.access == .read)
        do {
            try host.confirmLastReset()
        } catch {
            // Sync goes on; the cost is that an error before the next bind may be counted as a
            // repeat by the reset-loop guard.
            host.log.warning("could not record that the server accepted the store after its last reset: \(error)")
        }
        host.downloadEnded(complete: true)
        becameReady(access: reply.access)
        try await host.refreshCounts()
        // The machine learns the session is ready; its uploads start.
        host.sessionReady()
        startUploads()
    }

    private func apply(_ download: Download, host: isolated some Host) async throws {
        guard let store = host.store else { return }
        try FaultInjection.corruptionIfRequested(store: store.path)
        let report = try await store.apply(download.entries)
        host.log.trace("applied \(report.changesApplied) changes up to version \(report.serverVersion.version)")
        try await host.applied(report, latestServerVersion: download.latestServerVersion)
    }

    /// After every commit: an application's schema change is noticed here (`PRAGMA
    /// schema_version` moved). Returns the alteration when the tables no longer match.
    func checkStoreSchema(host: isolated some Host) async -> StoreError? {
        guard let store = host.store else { return nil }
        return await PartitionStoreOpener(settings: host.settings, log: host.log).checkSchema(of: store)
    }

    /// True for a store a delete-store action emptied: no identity and nothing unsynced; and
    /// when there is no store at all (no file, or an empty one: never bootstrapped, as when a
    /// device's first bind of a partition is refused), which has nothing to back up or empty.
    /// When the store cannot be read, false: the reset that follows says why in the journal.
    private func storeIsAlreadyEmptied(host: isolated some Host) async -> Bool {
        if host.store == nil {
            // Closed while idle: opened again to look. One that cannot be opened is reset, and
            // the reset, opening it again, logs why.
            do { try await host.openStoreIfPresent() } catch { return false }
        }
        guard let store = host.store else { return true }
        return await PartitionStoreOpener(settings: host.settings, log: host.log).isAlreadyEmptied(store)
    }
}
