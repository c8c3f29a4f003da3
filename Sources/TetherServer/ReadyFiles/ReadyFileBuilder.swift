import Foundation
import Glibc
import Logging
import NIOPosix
import Synchronization
import TetherProtocol
import TetherStore

/// Builds a partition's ready file: from its state rows the first time, then by applying the
/// history since the previous file to a copy of it — never from rows again while that file's
/// lineage and schema hold. The file is written by the agent's own store code
/// (``PartitionStore``: the same tables, indexes, capture triggers and metadata a device's
/// bootstrap writes), completed without an identity, then named after its digest. Reads the
/// storage as a state download does, off the write path.
struct ReadyFileBuilder: Sendable {
    /// What a build did.
    enum Outcome: Sendable, Equatable {
        case upToDate
        case tooSmall(version: Int64, rows: Int64)
        case built(ReadyFile, fromRows: Bool, entries: Int)
    }

    let storage: any HistoryReading
    /// The schema devices bind with now.
    let currentSchema: @Sendable () async -> Schema
    let settings: ReadyFileSettings

    static let historyBatchEntries = 512

    /// Brings `partition`'s file to the partition's head; `current` is the file the cache has.
    func build(_ partition: PartitionName, current: ReadyFile?) async throws -> Outcome {
        // Read first: a restore after this point fences the history read below (the file would
        // otherwise mix two lines of history).
        let epoch = try await storage.epoch(of: partition)
        guard let head = try await storage.head(of: partition), head.latest.version > 0 else { return .tooSmall(version: 0, rows: 0) }
        let schema = await currentSchema()
        if let current, try await Self.isUsable(current, head: head, schemaVersion: schema.version, storage: storage) {
            guard current.version.version < head.latest.version else { return .upToDate }
            return try await bringUpToDate(current, to: head.latest.version, schema: schema, epoch: epoch)
        }
        return try await buildFromRows(partition, schema: schema)
    }

    /// Whether the history continues from `file`: its version is in the retained history with
    /// the same salt (no restore went behind it), and it has the current schema.
    static func isUsable(_ file: ReadyFile, head: PartitionHead, schemaVersion: Int, storage: any HistoryReading) async throws -> Bool {
        guard file.schemaVersion == schemaVersion, file.version.version >= head.base.version,
            file.version.version <= head.latest.version
        else { return false }
        return try await storage.salt(of: file.partition, version: file.version.version) == file.version.salt
    }

    private func buildFromRows(_ partition: PartitionName, schema: Schema) async throws -> Outcome {
        let reader = try await storage.openState(of: partition)
        let building = try Self.buildingPath(in: directory(of: partition))
        do {
            guard reader.totalRows >= Int64(settings.minRows) else {
                await reader.close()
                return .tooSmall(version: reader.version.version, rows: reader.totalRows)
            }
            let store = try await PartitionStore.open(path: building, partition: partition, schema: schema, place: .staging)
            var done: Int64 = 0
            do {
                // The next chunk is read, converted and checked while this one is written: the
                // store's one writer does nothing else, as a device's download and inserts overlap.
                @Sendable func next() async throws -> (count: Int64, rows: CheckedStateRows)? {
                    let stored = try await reader.nextStored(maxRows: StoredStateRow.maxRowsPerChunk, maxBytes: ProtocolLimits.targetBatchBytes)
                    guard !stored.isEmpty else { return nil }
                    return (Int64(stored.count), try store.checkStateRows(try StoredStateRow.stateRows(stored, schema)))
                }
                var chunk = try await next()
                while let current = chunk {
                    done += current.count
                    let more = done < reader.totalRows
                    async let following = more ? next() : nil
                    try await store.insertStateRows(current.rows)
                    chunk = try await following
                }
                await reader.close()
                try await store.completeState(serverVersion: reader.version, clientFile: nil)
                try store.close()
            } catch {
                try? store.close()  // cleanup: the build's error is the one reported; the file is removed
                throw error
            }
            let file = try await finish(building, partition: partition, version: reader.version, schemaVersion: schema.version, rows: done, previous: nil)
            return .built(file, fromRows: true, entries: 0)
        } catch {
            await reader.close()
            PartitionStore.removeFiles(at: building)
            throw error
        }
    }

    private func bringUpToDate(_ current: ReadyFile, to target: Int64, schema: Schema, epoch: Int64) async throws -> Outcome {
        let building = try Self.buildingPath(in: directory(of: current.partition))
        do {
            try FileManager.default.copyItem(atPath: current.path, toPath: building)
            let store = try await PartitionStore.open(path: building, partition: current.partition, schema: schema, place: .staging)
            var cursor = current.version.version
            var entries = 0
            do {
                while cursor < target {
                    let batch = try await storage.history(
                        of: current.partition, after: cursor, maxEntries: Self.historyBatchEntries, maxBytes: ProtocolLimits.targetBatchBytes,
                        epoch: epoch)
                    guard let last = batch.last else { break }
                    let downloads = try batch.map { entry in
                        DownloadEntry(serverVersion: entry.version, integratedClientSeq: 0, changes: try ChangeRows.decode(entry.encodedChangeset))
                    }
                    try await store.apply(downloads)
                    entries += batch.count
                    cursor = last.version.version
                }
                let version = try await store.metadata().serverVersion
                try await store.completeState(serverVersion: version, clientFile: nil)
                let rows = try await store.rowCount()
                try store.close()
                let file = try await finish(
                    building, partition: current.partition, version: version, schemaVersion: schema.version, rows: rows, previous: current)
                return .built(file, fromRows: false, entries: entries)
            } catch {
                try? store.close()  // cleanup: the build's error is the one reported; the file is removed
                throw error
            }
        } catch {
            PartitionStore.removeFiles(at: building)
            throw error
        }
    }

    /// Hashes the finished file, gives it its name, and compresses its slices (`compress`),
    /// taking those that did not change from `previous`. The hashing and the compression read
    /// the file side by side, the slices compressed on every core (``ReadyFileSlices``), on
    /// NIO's blocking-work pool: they are seconds of CPU for a large file, not for the
    /// cooperative pool the sessions run on.
    private func finish(
        _ building: String, partition: PartitionName, version: ServerVersion, schemaVersion: Int, rows: Int64, previous: ReadyFile?
    ) async throws -> ReadyFile {
        let directory = directory(of: partition)
        let compress = settings.compress
        return try await NIOThreadPool.singleton.runIfActive {
            for companion in ["-wal", "-shm"] { unlink(building + companion) }
            chmod(building, 0o640)
            let size = (try FileManager.default.attributesOfItem(atPath: building)[.size] as? NSNumber)?.int64Value ?? 0
            let slicesBuilding = building + ".slices"
            defer { unlink(slicesBuilding) }  // renamed into place below unless something failed
            let outcome = Mutex<(digest: Result<[UInt8], any Error>?, slices: Result<ReadyFileSlices, any Error>?)>((nil, nil))
            DispatchQueue.concurrentPerform(iterations: compress ? 2 : 1) { task in
                if task == 0 {
                    let digest = Result { try ReadyFileDigest.of(path: building) }
                    outcome.withLock { $0.digest = digest }
                } else {
                    let slices = Result { try ReadyFileSlices.write(filePath: building, fileSize: size, to: slicesBuilding, previous: previous).slices }
                    outcome.withLock { $0.slices = slices }
                }
            }
            // concurrentPerform returns once every iteration ran: the digest is there.
            let (digestResult, slicesResult) = outcome.withLock { $0 }
            guard let digestResult else { throw ReadyFileError.io(path: building, operation: "hash", errno: EIO) }
            var file = ReadyFile(
                partition: partition, version: version, schemaVersion: schemaVersion, rows: rows, size: size,
                digest: try digestResult.get(), path: "")
            file.path = directory + "/" + file.fileName
            // The slices first: a file in place under its name has its slices beside it.
            if var slices = try slicesResult?.get() {
                slices.path = ReadyFileSlices.path(for: file.path)
                guard rename(slicesBuilding, slices.path) == 0 else { throw ReadyFileError.io(path: slices.path, operation: "rename", errno: errno) }
                file.slices = slices
            }
            guard rename(building, file.path) == 0 else {
                unlink(ReadyFileSlices.path(for: file.path))
                throw ReadyFileError.io(path: file.path, operation: "rename", errno: errno)
            }
            return file
        }
    }

    func directory(of partition: PartitionName) -> String {
        settings.cacheDirectory + "/" + partition.rawValue
    }

    private static func buildingPath(in directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        return directory + "/.building-\(UInt64.random(in: 1...UInt64.max)).db"
    }
}
