import TetherProtocol
import TetherStore
import TetherSyncClient

extension AgentStateFetcher {
    /// A session bound with the staging copy's identity at its version: the server streams the
    /// history after it, as to any device that was away; each batch is applied to the staging
    /// store until it holds the version the bind's reply named as the latest. A server error
    /// (a reset-class one when it cannot continue the copy) is thrown as it came: the reset
    /// answers it (``ClientResetExecutor/catchUpAfterHeal(_:context:log:)``).
    func catchUp(_ fetched: FetchedState, of partition: PartitionName) async throws -> FetchedState {
        guard let connection = await partitions.connection.current else { throw AgentError.noConnection }
        let token = try await partitions.readToken()
        // The staging copy holds the rows of the subscriptions it was fetched with: its history
        // comes cut by them (a lineage first, which the subscriptions follow on the wire).
        let session = try await connection.bind(BindRequest(
            session: await partitions.nextSessionID(), partition: partition.rawValue, token: token, identity: fetched.identity,
            lastServerVersion: fetched.serverVersion, schemaVersion: fetched.schema.version,
            lineage: StoreLineage(uploadSalt: StoreLineage.freshSalt(), integratedSeq: 0, lastSeq: 0, sent: []),
            subscriptions: SubscriptionRequest(held: fetched.subscriptions, wanted: fetched.subscriptions)))
        do {
            let caughtUp = try await receiveHistory(session, onto: fetched, partition: partition)
            try? await session.unbind()  // the session's end; the connection may be gone already
            return caughtUp
        } catch {
            try? await session.unbind()  // as above: the catch-up's error is the answer
            throw error
        }
    }

    private func receiveHistory(_ session: SyncSession, onto fetched: FetchedState, partition: PartitionName) async throws -> FetchedState {
        var events = session.events.makeAsyncIterator()
        guard let first = await events.next() else { throw SessionInterruption.disconnected(nil) }
        let latest: ServerVersion
        switch first {
        case .bound(let reply):
            guard !reply.stateFollows, !reply.fileFollows, reply.identity == fetched.identity else {
                throw StateCatchUpUnavailable("the server sends its whole state to the staging copy's identity")
            }
            guard reply.schema == fetched.schema else {
                throw StateCatchUpUnavailable("the partition's schema changed since the state was fetched")
            }
            latest = reply.latestServerVersion
        default: throw SessionInterruption(first)
        }
        var current = fetched.serverVersion
        guard latest.version >= current.version else {
            throw StateCatchUpUnavailable("the partition's history ends before the staging copy (\(latest.version) < \(current.version))")
        }
        guard current.version < latest.version else { return fetched }
        let staging = try await PartitionStore.open(path: fetched.path, partition: partition, schema: fetched.schema, place: .staging)
        defer { try? staging.close() }  // each batch committed: closing only releases the file
        while current.version < latest.version {
            guard let event = await events.next() else { throw SessionInterruption.disconnected(nil) }
            switch event {
            case .download(let download):
                current = try await staging.apply(download.entries).serverVersion
            case .error, .disconnected, .unbound: throw SessionInterruption(event)
            case .bound, .state, .healed, .compensatingWrites, .subscriptionChunk: continue
            }
        }
        return FetchedState(
            path: fetched.path, schema: fetched.schema, identity: fetched.identity, serverVersion: current, subscriptions: fetched.subscriptions)
    }
}
