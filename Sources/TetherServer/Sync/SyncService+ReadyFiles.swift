import Logging
import TetherProtocol

extension SyncService {
    /// The ready file a bind without identity gets its state as, or nil for rows: the client
    /// must have asked (``BindRequest/readyFile``), and the partition's file must be one the
    /// history continues from (same lineage, retained, current schema). When there is none, or
    /// it is behind the head, a build is asked for and this device is not kept waiting.
    func readyFile(for request: BindRequest, partition: PartitionName, head: PartitionHead, schemaVersion: Int) async -> ReadyFileHandle? {
        guard let cache = readyFiles, let asked = request.readyFile, await cache.isLoaded else { return nil }
        if case .refused(let digest) = asked {
            logger.notice("a device refused this partition's ready file (digest mismatch); it gets rows", metadata: ["partition": "\(partition)"])
            await cache.refused(partition, digest: digest)
            return nil
        }
        guard let file = await cache.current(partition) else {
            await cache.wantBuild(partition, head: head.latest.version)
            return nil
        }
        let usable: Bool
        do {
            usable = try await ReadyFileBuilder.isUsable(file, head: head, schemaVersion: schemaVersion, storage: storage.history)
        } catch {
            return nil  // rows; the storage error shows in the state download that follows
        }
        guard usable else {
            await cache.discard(file, reason: "the history no longer continues from it (restore, compaction or schema change)")
            await cache.wantBuild(partition, head: head.latest.version)
            return nil
        }
        if file.version.version < head.latest.version { await cache.wantBuild(partition, head: head.latest.version) }
        var offset: Int64 = 0
        if case .resume(let digest, let held) = asked, digest == file.digest, held > 0, held < file.size {
            offset = held
            logger.notice("ready file download resumed", metadata: [
                "partition": "\(partition)", "version": "\(file.version.version)", "offset": "\(held)", "bytes": "\(file.size)",
            ])
        }
        return await cache.open(file, from: offset)
    }
}
