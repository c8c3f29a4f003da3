import Foundation
import TetherSyncClient
import TetherProtocol
import TetherStore

/// Receives the server's state of a partition (the `state` chunks after a bind with
/// `stateFollows`) into a staging store, for a new store's bootstrap and a reset's step 4.
/// Before each chunk is written, ``DiskSpaceCheck`` makes sure the rest of the announced state
/// fits on the staging store's and the store's file systems (`storePath`), or throws
/// ``DiskSpaceError``: the store itself is not touched by a download. A session bound with
/// `fileFollows` receives a ready file instead (``ReadyFileDownload``). `subscriptions`: the set
/// the bind asked for (nil: the whole partition), recorded in the store with the state.
enum StateDownload {
    static func receive(
        reply: BindReply, events: inout SessionEvents.AsyncIterator, partition: PartitionName, stagingPath: String,
        storePath: String? = nil, subscriptions: SubscriptionSet? = nil, space: DiskSpaceCheck = .live,
        isolation: isolated (any Actor)? = #isolation, progress: (DownloadProgress) async -> Void
    ) async throws -> FetchedState {
        let directories = ([stagingPath] + (storePath.map { [$0] } ?? [])).map { ($0 as NSString).deletingLastPathComponent }
        let readyFile = ReadyFileDownload(stagingPath: stagingPath)
        if reply.fileFollows {
            return try await readyFile.receive(
                reply: reply, events: &events, partition: partition, directories: directories, space: space, progress: progress)
        }
        var written: Int64 = 0
        // A link at the staging path is refused, not removed: someone planted it (``NoFollow``).
        try NoFollow.refuseLinks(sqlite: stagingPath, place: .staging)
        try PartitionStore.removeFilesBeforeReuse(at: stagingPath)
        try FileManager.default.createDirectory(
            atPath: (stagingPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o750])
        let staging = try await PartitionStore.open(path: stagingPath, partition: partition, schema: reply.schema, place: .staging)
        defer { try? staging.close() }  // its writes committed: closing only releases the file
        while let event = await events.next(isolation: #isolation) {
            switch event {
            case .state(let chunk):
                guard case .rows(let rows) = chunk.content else {
                    throw ReadyFileDownloadError.unexpected(partition: partition, "a file slice on a session bound for rows")
                }
                let bytes = Int64(rows.byteCount)
                try space.check(directories: directories, progress: chunk.progress, written: written, chunk: bytes)
                try await staging.insertStateRows(rows)
                written += bytes
                await progress(chunk.progress)
                if chunk.isLast {
                    try await staging.completeState(serverVersion: chunk.serverVersion, clientFile: reply.identity, subscriptions: subscriptions)
                    readyFile.forget()  // a refusal noted is answered: the next download may take a file again
                    return FetchedState(
                        path: stagingPath, schema: reply.schema, identity: reply.identity, serverVersion: chunk.serverVersion,
                        subscriptions: subscriptions)
                }
            case .error, .disconnected, .unbound: throw SessionInterruption(event)
            case .bound, .download, .healed, .compensatingWrites, .subscriptionChunk: continue
            }
        }
        throw SessionInterruption.disconnected(nil)
    }
}
