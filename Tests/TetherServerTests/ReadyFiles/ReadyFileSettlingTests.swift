import Foundation
import Logging
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// Background builds of ready files (docs/server.md, "Ready files", `settle_seconds`): when a
/// written partition is due, and which due partitions the cache queues a build for.
@Suite struct ReadyFileSettlingTests {
    typealias Settling = ReadyFileSettling<ContinuousClock.Instant>
    let start = ContinuousClock.now
    let p = PartitionName("p")!
    let q = PartitionName("q")!

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func aPartitionIsDueOnceItsWritesAreQuiet() {
        var settling = Settling(quiet: .seconds(2), longest: .seconds(60))
        #expect(settling.nextDeadline == nil)
        settling.committed(p, changes: 10, at: at(0))
        settling.committed(p, changes: 5, at: at(1500))
        #expect(settling.nextDeadline == at(3500))
        #expect(settling.takeDue(at: at(3499)).isEmpty)
        #expect(settling.takeDue(at: at(3500)) == [.init(partition: p, changes: 15)])
        #expect(settling.takeDue(at: at(9000)).isEmpty, "taken once")
        #expect(settling.nextDeadline == nil)
    }

    @Test func aPartitionWrittenWithoutPauseIsDueAtTheLatestAfterTheLongestWait() {
        var settling = Settling(quiet: .seconds(2), longest: .seconds(10))
        for second in 0...20 { settling.committed(p, changes: 1, at: at(second * 1000)) }
        // Written every second: never quiet, due 10 s after the first write.
        #expect(settling.takeDue(at: at(10_000)).isEmpty == false)
        settling.committed(p, changes: 1, at: at(10_500))
        #expect(settling.nextDeadline == at(12_500), "a write after the build was asked for starts a new wait")
    }

    @Test func anotherInstancesWritesAreNotCounted() {
        var settling = Settling(quiet: .seconds(1), longest: .seconds(5))
        settling.committed(p, changes: 3, at: at(0))
        settling.committed(p, changes: nil, at: at(100))
        settling.committed(p, changes: 4, at: at(200))
        settling.committed(q, changes: 4, at: at(300))
        #expect(settling.takeDue(at: at(2000)) == [.init(partition: p, changes: nil), .init(partition: q, changes: 4)], "in the order they became due")
    }

    @Test func theLongestWaitIsNeverShorterThanTheQuietOne() {
        var settling = Settling(quiet: .seconds(5), longest: .seconds(1))
        settling.committed(p, changes: 1, at: at(0))
        #expect(settling.nextDeadline == at(5000))
    }

    static func cache(_ directory: TemporaryDirectory, minRows: Int = 1000, settle: Int = 2) async -> ReadyFileCache {
        var settings = ReadyFileSettings(dataDirectory: directory.path)
        settings.minRows = minRows
        settings.settleSeconds = settle
        let cache = ReadyFileCache(settings: settings, logger: Logger(label: "test"))
        await cache.load()
        return cache
    }

    static func queued(_ cache: ReadyFileCache) async -> [ReadyFileCache.Work] {
        cache.close()
        var work: [ReadyFileCache.Work] = []
        for await item in cache.work { work.append(item) }
        return work
    }

    @Test func aSettledPartitionIsBuiltAndOneTooSmallOnlyOnceEnoughChangesCame() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = await Self.cache(directory)
        await cache.committed(p, changes: 5, at: at(0))
        await cache.noteTooSmall(q, at: 3, rows: 400)
        await cache.committed(q, changes: 500, at: at(0))
        #expect(await cache.settleDeadline == at(2000))
        await cache.settle(at: at(2000))
        await cache.finished(.build(p))
        // q: 400 rows and 500 changes since cannot reach 1,000; 100 more can.
        await cache.committed(q, changes: 99, at: at(3000))
        await cache.settle(at: at(5000))
        await cache.committed(q, changes: 1, at: at(6000))
        await cache.committed(q, changes: nil, at: at(6000))
        await cache.settle(at: at(8000))
        await cache.committed(q, changes: 100, at: at(9000))
        await cache.settle(at: at(11_000))
        #expect(await cache.settleDeadline == nil)
        #expect(await Self.queued(cache) == [.build(p), .build(q)])
    }

    @Test func aFileIsBroughtUpToDateOnceATenthBehindAndAnotherInstancesWritesStartNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = await Self.cache(directory, minRows: 100)
        // A file of 10 rows (ReadyFileCacheTests.file): a tenth is less than min_rows, 100.
        let file = try ReadyFileCacheTests.file(await cache.settings, "p", version: 5, size: 10)
        await cache.install(file)
        await cache.committed(p, changes: nil, at: at(0))
        await cache.committed(q, changes: nil, at: at(0))
        await cache.settle(at: at(2000))
        await cache.committed(p, changes: 60, at: at(3000))
        await cache.settle(at: at(5000))
        await cache.committed(p, changes: 39, at: at(6000))
        await cache.settle(at: at(8000))
        #expect(await cache.settleDeadline == nil)
        await cache.committed(p, changes: 1, at: at(9000))
        await cache.settle(at: at(11_000))
        #expect(await Self.queued(cache) == [.build(p)], "once 100 changes came, not before; other instances' versions start nothing")
    }

    @Test func settleSecondsZeroLeavesBuildsToBinds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = await Self.cache(directory, settle: 0)
        await cache.committed(p, changes: 5000, at: at(0))
        #expect(await cache.settleDeadline == nil)
        await cache.settle(at: at(100_000))
        #expect(await Self.queued(cache) == [])
    }
}
