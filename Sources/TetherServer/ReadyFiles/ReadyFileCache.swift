import Foundation
import Glibc
import Logging
import TetherProtocol

/// The ready files of this instance (docs/server.md, "Ready files"): the newest file of each
/// partition, bounded on disk by `max_cache_bytes` (the least recently served go first), and the
/// queue of builds and checks that ``ReadyFileService`` works through. A bind asks it for a
/// file; when none is ready it asks for a build and the device gets rows: no device waits for
/// a build.
package actor ReadyFileCache {
    /// Work for ``ReadyFileService``.
    enum Work: Sendable, Hashable {
        /// Build or bring up to date the partition's file.
        case build(PartitionName)
        /// A device refused the partition's file with this digest: hash it again.
        case check(PartitionName, digest: [UInt8])
    }

    let settings: ReadyFileSettings
    let logger: Logger
    nonisolated let work: AsyncStream<Work>
    private let workContinuation: AsyncStream<Work>.Continuation
    private var files: [PartitionName: ReadyFile] = [:]
    /// When each partition's file was last installed or served, for eviction (a counter, not a clock).
    private var lastUsed: [PartitionName: UInt64] = [:]
    private var useCounter: UInt64 = 0
    private var queued: Set<Work> = []
    /// Partitions that get no file (``NoFile``): not built again before a newer version.
    var withoutFile: [PartitionName: NoFile] = [:]
    /// Changes committed here since each partition's file was installed (background updates).
    var changesSinceFile: [PartitionName: Int64] = [:]
    /// Written partitions waiting for their writes to settle (`settle_seconds`); nil when off.
    var settling: ReadyFileSettling<ContinuousClock.Instant>?
    let settleContinuation: AsyncStream<Void>.Continuation
    /// Wakes ``ReadyFileService``'s settle loop when a first partition is written.
    nonisolated let settleWakeups: AsyncStream<Void>
    /// Digests already checked after a refusal: a device cannot make the server hash a file twice.
    private var checked: Set<[UInt8]> = []
    /// Bumped when a partition's history is rewritten (a restore): a build that began before is
    /// not installed — it may have read two lines of history.
    private var generations: [PartitionName: UInt64] = [:]
    /// False until ``load()`` has checked the files a previous run left.
    private(set) var isLoaded = false

    package init(settings: ReadyFileSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        (work, workContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (settleWakeups, settleContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        if settings.enabled, settings.settleSeconds > 0 {
            settling = ReadyFileSettling(quiet: .seconds(settings.settleSeconds), longest: .seconds(settings.settleMaxSeconds))
        }
    }

    /// The partition's newest file, if one is ready.
    func current(_ partition: PartitionName) -> ReadyFile? { files[partition] }

    /// Opens `file` for a session's download from `offset`; nil when it is gone.
    func open(_ file: ReadyFile, from offset: Int64) -> ReadyFileHandle? {
        guard files[file.partition] == file, let handle = ReadyFileHandle(file: file, startOffset: offset) else { return nil }
        touch(file.partition)
        return handle
    }

    /// Asks for the partition's file to be built or brought up to its head (`head` version).
    /// Coalesced: one queued build per partition.
    func wantBuild(_ partition: PartitionName, head: Int64) {
        guard settings.enabled else { return }
        // A partition found too small is counted again only once it has a newer version.
        if let none = withoutFile[partition], head <= none.version { return }
        enqueueBuild(partition)
    }

    func enqueueBuild(_ partition: PartitionName) {
        let item = Work.build(partition)
        guard !queued.contains(item) else { return }
        queued.insert(item)
        workContinuation.yield(item)
    }

    /// A device found the file with `digest` did not match it: check it once.
    func refused(_ partition: PartitionName, digest: [UInt8]) {
        guard files[partition]?.digest == digest, !checked.contains(digest) else { return }
        checked.insert(digest)
        let item = Work.check(partition, digest: digest)
        queued.insert(item)
        workContinuation.yield(item)
    }

    func finished(_ item: Work) { queued.remove(item) }

    /// The partition holds `rows` rows, fewer than `min_rows`, at `version`.
    func noteTooSmall(_ partition: PartitionName, at version: Int64, rows: Int64) {
        withoutFile[partition] = .tooSmall(version: version, rows: rows, changesSince: 0)
    }

    /// The partition's history was rewritten (restored): builds under way are not installed.
    /// Its file stays: the bind checks whether the history still continues from it.
    func historyRewritten(_ partition: PartitionName) { generations[partition, default: 0] += 1 }

    func generation(of partition: PartitionName) -> UInt64 { generations[partition] ?? 0 }

    /// Puts a newly built file in place of the partition's older one and keeps the cache under
    /// its bound; a file whose build began before a restore of the partition (`generation`) is
    /// removed instead.
    func install(_ file: ReadyFile, generation: UInt64? = nil) {
        if let generation, generation != self.generation(of: file.partition) {
            file.remove()
            logger.notice("ready file built across a restore; removed", metadata: ["partition": "\(file.partition)"])
            return
        }
        guard file.diskBytes <= settings.maxCacheBytes else {
            file.remove()
            withoutFile[file.partition] = .tooLarge(version: file.version.version)
            logger.warning("ready file larger than max_cache_bytes; the partition's states go as rows", metadata: [
                "partition": "\(file.partition)", "bytes": "\(file.diskBytes)", "max_cache_bytes": "\(settings.maxCacheBytes)",
            ])
            return
        }
        withoutFile[file.partition] = nil
        changesSinceFile[file.partition] = nil
        if let old = files[file.partition], old.path != file.path { old.remove() }
        files[file.partition] = file
        touch(file.partition)
        evict()
    }

    /// Drops the partition's file (another lineage after a restore, another schema, damaged).
    func discard(_ file: ReadyFile, reason: String) {
        guard files[file.partition] == file else { return }
        files[file.partition] = nil
        file.remove()
        logger.notice("ready file dropped", metadata: ["partition": "\(file.partition)", "version": "\(file.version.version)", "reason": "\(reason)"])
    }

    /// The bytes the cache holds.
    var totalBytes: Int64 { files.values.reduce(0) { $0 + $1.diskBytes } }

    /// The partition's file with its slices written again (they did not match it).
    func replaceSlices(of file: ReadyFile, with slices: ReadyFileSlices?) {
        guard files[file.partition] == file else { return }
        files[file.partition]?.slices = slices
        evict()
    }

    private func touch(_ partition: PartitionName) {
        useCounter += 1
        lastUsed[partition] = useCounter
    }

    private func evict() {
        var total = totalBytes
        while total > settings.maxCacheBytes,
            let victim = files.keys.min(by: { (lastUsed[$0] ?? 0) < (lastUsed[$1] ?? 0) }), let file = files[victim]
        {
            files[victim] = nil
            file.remove()
            total -= file.diskBytes
            logger.notice("ready file evicted (max_cache_bytes)", metadata: [
                "partition": "\(victim)", "version": "\(file.version.version)", "bytes": "\(file.diskBytes)",
            ])
        }
    }

    /// Takes up the files a previous run left, after checking each against its digest; removes
    /// half-built ones and any that fails. Files are served only once this has run. The reading
    /// and hashing happen outside the actor, so binds asking meanwhile are answered at once
    /// (with rows).
    nonisolated func load() async {
        let found = Self.scan(settings, logger: logger)
        await adopt(found)
    }

    private func adopt(_ found: [ReadyFile]) {
        for file in found {
            files[file.partition] = file
            touch(file.partition)
        }
        evict()
        isLoaded = true
        logger.notice("ready files loaded", metadata: ["files": "\(files.count)", "bytes": "\(totalBytes)"])
    }

    /// The newest file of each partition in the cache directory that matches its digest; the
    /// others, and half-built files, are removed.
    private static func scan(_ settings: ReadyFileSettings, logger: Logger) -> [ReadyFile] {
        let manager = FileManager.default
        guard settings.enabled else { return [] }
        let names: [String]
        do {
            try manager.createDirectory(atPath: settings.cacheDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            names = try manager.contentsOfDirectory(atPath: settings.cacheDirectory)
        } catch {
            logger.error("cannot create or read the ready-file directory; states are sent as rows", metadata: [
                "directory": "\(settings.cacheDirectory)", "error": "\(error)",
            ])
            return []
        }
        var found: [ReadyFile] = []
        for name in names {
            guard let partition = PartitionName(name) else { continue }
            let directory = settings.cacheDirectory + "/" + name
            var newest: ReadyFile? = nil
            for entry in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {  // not a folder: skipped
                let path = directory + "/" + entry
                if entry.hasPrefix(".building-") { unlink(path); continue }
                if entry.hasSuffix(".slices") {
                    // Kept only beside the file they belong to.
                    if !manager.fileExists(atPath: String(path.dropLast(".slices".count)) + ".db") { unlink(path) }
                    continue
                }
                let size = (try? manager.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil  // gone meanwhile: skipped
                guard let size, let file = ReadyFile.parse(name: entry, partition: partition, directory: directory, size: size) else { continue }
                if let best = newest, best.version.version >= file.version.version {
                    file.remove()
                    continue
                }
                if let best = newest { best.remove() }
                newest = file
            }
            guard var file = newest else { continue }
            if (try? ReadyFileDigest.of(path: file.path)) == file.digest {  // unreadable: as not matching, removed below
                file.slices = slices(of: file, settings, logger: logger)
                found.append(file)
            } else {
                file.remove()
                logger.warning("ready file does not match its digest; removed", metadata: ["partition": "\(partition)", "path": "\(file.path)"])
            }
        }
        return found
    }

    /// The slices a previous run kept for `file`; written now when they are missing or do not
    /// fit it (and `compress` is on), removed when `compress` is off.
    private static func slices(of file: ReadyFile, _ settings: ReadyFileSettings, logger: Logger) -> ReadyFileSlices? {
        let path = ReadyFileSlices.path(for: file.path)
        guard settings.compress else {
            unlink(path)
            return nil
        }
        if let kept = ReadyFileSlices.read(path: path, fileSize: file.size) { return kept }
        do {
            return try ReadyFileSlices.build(for: file, previous: nil).slices
        } catch {
            unlink(path)
            logger.warning("cannot compress a ready file's slices; it is sent as it is", metadata: [
                "partition": "\(file.partition)", "error": "\(error)",
            ])
            return nil
        }
    }

    /// Ends the work queue and the settle loop's wake-ups (shutdown).
    nonisolated func close() {
        workContinuation.finish()
        settleContinuation.finish()
    }
}
