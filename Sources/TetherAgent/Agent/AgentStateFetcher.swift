import Foundation
import TetherSyncClient
import TetherProtocol

/// Step 4 of a reset over the agent's current connection: a bind as a new device, whose
/// state is received into the staging store.
struct AgentStateFetcher: ServerStateFetcher {
    let partitions: PartitionRegistry

    func fetchState(of partition: PartitionName, into stagingPath: String) async throws -> FetchedState {
        guard let connection = await partitions.connection.current else { throw AgentError.noConnection }
        let token = try await partitions.readToken()
        // Its progress shows in the partition's status (`tetherctl status`, `wait-synced --progress`).
        let controller = await partitions.controller(named: partition)
        // The state of the partition's subscriptions: ready files hold whole partitions only.
        let wanted = await controller?.settings.subscriptions
        // A fresh lineage (this session uploads nothing) carries the ready-file request.
        let session = try await connection.bind(
            BindRequest(
                session: await partitions.nextSessionID(), partition: partition.rawValue, token: token, identity: nil,
                lineage: StoreLineage(uploadSalt: StoreLineage.freshSalt(), integratedSeq: 0, lastSeq: 0, sent: []),
                readyFile: wanted == nil ? ReadyFileDownload(stagingPath: stagingPath).request() : nil,
                subscriptions: SubscriptionRequest(held: nil, wanted: wanted)))
        do {
            let fetched = try await receive(
                session, partition: partition, stagingPath: stagingPath, controller: controller, subscriptions: wanted)
            await controller?.downloadEnded(complete: true)
            try? await session.unbind()  // the session's end; the connection may be gone already
            return fetched
        } catch {
            await controller?.downloadEnded(complete: false)
            // Shown as the partition's last error too (the reset logs the failed phase).
            if let error = error as? DiskSpaceError { await controller?.downloadRefused(error) }
            if case SessionInterruption.serverError(let refusal) = error, refusal.action == .deleteStore {
                await controller?.stateRefused(refusal)
            }
            try? await session.unbind()  // as above: the fetch's error is the answer
            throw error
        }
    }

    private func receive(
        _ session: SyncSession, partition: PartitionName, stagingPath: String, controller: PartitionController?,
        subscriptions: SubscriptionSet?
    ) async throws -> FetchedState {
        var events = session.events.makeAsyncIterator()
        guard let first = await events.next() else { throw SessionInterruption.disconnected(nil) }
        switch first {
        case .bound(let reply):
            let storePath = await controller?.settings.storePath
            return try await StateDownload.receive(
                reply: reply, events: &events, partition: partition, stagingPath: stagingPath, storePath: storePath,
                subscriptions: subscriptions, progress: { await controller?.downloadProgress($0) })
        default: throw SessionInterruption(first)
        }
    }
}
