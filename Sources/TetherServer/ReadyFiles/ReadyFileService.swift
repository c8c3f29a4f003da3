import Foundation
import Logging
import ServiceLifecycle
import TetherProtocol

/// Works through the ready-file cache's queue, one build at a time (docs/server.md, "Ready
/// files"): first takes up the files a previous run left, then builds and brings files up to
/// date as binds ask, and checks a file a device refused. Off the write path: a build reads the
/// storage as a state download does.
struct ReadyFileService: Service {
    let cache: ReadyFileCache
    let builder: ReadyFileBuilder
    let metrics: ServerMetrics
    let logger: Logger
    var clock = ContinuousClock()

    func run() async throws {
        await cache.load()
        await withDiscardingTaskGroup { group in
            group.addTask { await settleLoop() }
            await withGracefulShutdownHandler {
                for await item in cache.work {
                    await perform(item)
                    await cache.finished(item)
                }
            } onGracefulShutdown: {
                cache.close()
            }
            group.cancelAll()
        }
    }

    /// Queues the builds of written partitions as their writes settle (`settle_seconds`):
    /// sleeps until the next one is due, or waits for a first write while none is.
    private func settleLoop() async {
        var wakeups = cache.settleWakeups.makeAsyncIterator()
        while !Task.isCancelled {
            if let deadline = await cache.settleDeadline {
                do { try await clock.sleep(until: deadline) } catch { return }  // cancelled: shutting down
                await cache.settle(at: clock.now)
            } else if await wakeups.next() == nil {
                return  // closed: shutting down
            }
        }
    }

    private func perform(_ item: ReadyFileCache.Work) async {
        switch item {
        case .build(let partition):
            let started = ContinuousClock.now
            let generation = await cache.generation(of: partition)
            do {
                switch try await builder.build(partition, current: await cache.current(partition)) {
                case .upToDate:
                    break
                case .tooSmall(let version, let rows):
                    await cache.noteTooSmall(partition, at: version, rows: rows)
                case .built(let file, let fromRows, let entries):
                    await cache.install(file, generation: generation)
                    metrics.readyFileBuilt(fromRows: fromRows)
                    let how = fromRows ? "from rows" : "from the previous file and \(entries) history entries"
                    logger.notice("ready file built \(how)", metadata: [
                        "partition": "\(partition)", "version": "\(file.version.version)", "rows": "\(file.rows)",
                        "bytes": "\(file.size)", "seconds": "\((ContinuousClock.now - started).seconds)",
                    ])
                }
            } catch {
                logger.error("ready file build failed; devices get rows", metadata: ["partition": "\(partition)", "error": "\(error)"])
            }
        case .check(let partition, let digest):
            guard let file = await cache.current(partition), file.digest == digest else { return }
            let actual = try? ReadyFileDigest.of(path: file.path)  // unreadable: as not matching, built again
            if actual != digest {
                await cache.discard(file, reason: "a device found it does not match its digest; it is built again")
                await cache.wantBuild(partition, head: file.version.version)
            } else if let slices = file.slices, !slices.matches(filePath: file.path, fileSize: file.size) {
                // The file is sound, its compressed slices are not: they are written again.
                do {
                    let rewritten = try ReadyFileSlices.build(for: file, previous: nil).slices
                    await cache.replaceSlices(of: file, with: rewritten)
                    logger.warning("a ready file's compressed slices did not match it; written again", metadata: [
                        "partition": "\(partition)", "version": "\(file.version.version)",
                    ])
                } catch {
                    unlink(slices.path)
                    await cache.replaceSlices(of: file, with: nil)
                    logger.warning(
                        "a ready file's compressed slices did not match it and cannot be written again; it is sent as it is",
                        metadata: ["partition": "\(partition)", "version": "\(file.version.version)", "error": "\(error)"])
                }
            } else {
                logger.notice("a device refused a ready file that matches its digest here", metadata: [
                    "partition": "\(partition)", "version": "\(file.version.version)",
                ])
            }
        }
    }
}

extension Duration {
    /// Whole and fractional seconds, for logs.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
