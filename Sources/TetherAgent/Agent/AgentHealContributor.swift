import Foundation
import Logging
import TetherSyncClient
import TetherProtocol
import TetherStore

/// The healing step of a reset over the agent's current connection (docs/protocol.md,
/// `07 heal`): a session bound with the identity the reset fetched, at the version it fetched;
/// the offer, then the view's chunks one at a time, each answered before the next goes, the
/// last marked final. The session's downloads (the server streams them to any bound session)
/// are read and let go: the store the reset rewrites gets them after its own bind.
struct AgentHealContributor: HealContributor {
    let partitions: PartitionRegistry

    func contribute(
        partition: PartitionName, contribution: UInt64, view: ServerVersion, fetched: FetchedState, chunks: HealViewChunks
    ) async throws(HealContributionError) -> HealContributionResult {
        guard let connection = await partitions.connection.current else { throw .transient("no connection to the server") }
        let session: SyncSession
        do {
            let token = try await partitions.readToken()
            // With the subscriptions the state was fetched with: the server takes from the view
            // only the rows they hold (a row absent from it may have left them, not been deleted).
            session = try await connection.bind(BindRequest(
                session: await partitions.nextSessionID(), partition: partition.rawValue, token: token, identity: fetched.identity,
                lastServerVersion: fetched.serverVersion, schemaVersion: fetched.schema.version,
                lineage: StoreLineage(uploadSalt: StoreLineage.freshSalt(), integratedSeq: 0, lastSeq: 0, sent: []),
                subscriptions: SubscriptionRequest(held: fetched.subscriptions, wanted: fetched.subscriptions)))
        } catch {
            throw .transient("binding to send the view: \(error)")
        }
        var exchange = HealExchange(session: session, contribution: contribution, view: view, base: fetched.serverVersion.version)
        do {
            let result = try await exchange.run(chunks, partition: partition, log: partitions.logger)
            try? await session.unbind()  // the session's end; the connection may be gone already
            return result
        } catch {
            try? await session.unbind()  // as above: the failure is the answer
            throw error
        }
    }
}

/// One contribution's messages on its session.
private struct HealExchange {
    let session: SyncSession
    let contribution: UInt64
    let view: ServerVersion
    let base: Int64
    var events: SessionEvents.AsyncIterator

    init(session: SyncSession, contribution: UInt64, view: ServerVersion, base: Int64) {
        self.session = session
        self.contribution = contribution
        self.view = view
        self.base = base
        self.events = session.events.makeAsyncIterator()
    }

    mutating func run(_ chunks: HealViewChunks, partition: PartitionName, log: Logger) async throws(HealContributionError) -> HealContributionResult {
        if let refetch = try await bound() { return .rebase(reason: refetch) }
        let offer = try await send(.offer(session: session.id, contribution: contribution, view: view, base: base))
        if let result = Self.result(of: offer) { return result }
        var iterator = chunks.makeAsyncIterator()
        var pending = try await Self.next(&iterator)
        var healed: Int64 = offer.healedChanges
        repeat {
            // One chunk ahead: the last one is marked final (an empty final chunk when the view
            // has nothing the server lacks).
            let next = pending == nil ? nil : try await Self.next(&iterator)
            let reply = try await send(HealChunk(
                session: session.id, contribution: contribution, view: view, base: base, isFinal: next == nil,
                unknown: pending?.unknown ?? ChangeRows(Changeset()), rows: pending?.rows ?? ChangeRows(Changeset())))
            healed = reply.healedChanges
            if let result = Self.result(of: reply) { return result }
            if next != nil { await FaultInjection.holdHealIfRequested(log: log, partition: partition) }
            pending = next
        } while pending != nil
        // The final chunk was answered `accepted`: a server that does not speak the rule.
        throw .refused("the server accepted the final chunk without completing the contribution (\(healed) changes so far)")
    }

    private static func result(of reply: HealReply) -> HealContributionResult? {
        switch reply.outcome {
        case .accepted: nil
        case .completed: .contributed(healed: Int(reply.healedChanges))
        case .notWanted: .notWanted(reason: reply.reason)
        case .covered: .covered(reason: reply.reason)
        case .rebase: .rebase(reason: reply.reason)
        }
    }

    private static func next(_ iterator: inout HealViewChunks.AsyncIterator) async throws(HealContributionError) -> HealViewChunk? {
        do {
            return try await iterator.next()
        } catch {
            throw HealContributionError(reading: error)
        }
    }

    /// Waits for the bind's answer: nil once bound, or why the state must be fetched again.
    private mutating func bound() async throws(HealContributionError) -> String? {
        while true {
            switch await events.next() {
            case .bound(let reply) where !reply.stateFollows: return nil
            case .bound: throw .refused("the server sent a state to a bind that named its identity")
            case .error(let error) where Self.forgotten(error): return Self.forgottenReason(error)
            case .error(let error): throw Self.failure(error)
            case .disconnected(let error): throw .transient("the connection ended\(error.map { ": \($0)" } ?? "")")
            case .unbound, nil: throw .transient("the session ended before it was bound")
            case .state, .download, .healed, .compensatingWrites, .subscriptionChunk: continue
            }
        }
    }

    /// Sends one chunk and waits for its answer; downloads meanwhile are let go.
    private mutating func send(_ chunk: HealChunk) async throws(HealContributionError) -> HealReply {
        do {
            try await session.heal(chunk)
        } catch {
            throw .transient("sending the view: \(error)")
        }
        while true {
            switch await events.next() {
            case .healed(let reply) where reply.contribution == contribution: return reply
            case .error(let error) where Self.forgotten(error):
                // Answered as the server's own rebase would be: fetch the state again.
                return HealReply(
                    session: session.id, contribution: contribution, outcome: .rebase, healedChanges: 0,
                    reason: Self.forgottenReason(error))
            case .error(let error): throw Self.failure(error)
            case .disconnected(let error): throw .transient("the connection ended\(error.map { ": \($0)" } ?? "")")
            case .unbound, nil: throw .transient("the session ended before the server answered")
            case .bound, .state, .download, .healed, .compensatingWrites, .subscriptionChunk: continue
            }
        }
    }

    /// 208: the server forgot the fetched identity (sync terminated and enabled again, the
    /// partition restored, between the download and the contribution). The view in the backup is
    /// still the window's: the state is fetched again under a new identity and the view offered
    /// again (the coordinator bounds how often).
    private static func forgotten(_ error: SyncError) -> Bool { error.code == .badClientFileIdentifier }

    private static func forgottenReason(_ error: SyncError) -> String {
        "the server forgot the identity the state was fetched under: \(error)"
    }

    /// Any other session error: one that would reset a store cannot be retried with this identity — the
    /// fetched identity is not (or no longer) the server's, a restore or a termination came
    /// between, or the rows do not fit (225) — and neither can a refusal of access: the reset
    /// goes on without healing, and a store the server refuses again resets again (the reset
    /// loop guard bounds that). Fetching again here instead would loop inside the reset
    /// against a server that refuses every bind. Anything else may pass.
    private static func failure(_ error: SyncError) -> HealContributionError {
        switch error.action {
        case .clientReset, .clientResetNoRecovery, .deleteStore, .fatal, .reauth: .refused("\(error)")
        case .retry: .transient("\(error)")
        }
    }
}
