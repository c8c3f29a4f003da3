import Foundation
import Logging
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// The ready-file cache (docs/server.md, "Ready files"): its bound on disk, the files a previous
/// run left (checked against their digests), coalesced builds and one check per refused digest.
@Suite struct ReadyFileCacheTests {
    static func settings(_ directory: String, maxBytes: Int64 = 1 << 30) -> ReadyFileSettings {
        var settings = ReadyFileSettings(dataDirectory: directory)
        settings.maxCacheBytes = maxBytes
        return settings
    }

    /// A file of `size` bytes for `partition` at `version`, named as the builder names it.
    static func file(_ settings: ReadyFileSettings, _ partition: String, version: Int64, size: Int, byte: UInt8 = 1) throws -> ReadyFile {
        let name = PartitionName(partition)!
        let directory = settings.cacheDirectory + "/" + partition
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let building = directory + "/.building-test.db"
        try Data(repeating: byte, count: size).write(to: URL(fileURLWithPath: building))
        var file = ReadyFile(
            partition: name, version: ServerVersion(version: version, salt: 7), schemaVersion: 1, rows: 10, size: Int64(size),
            digest: try ReadyFileDigest.of(path: building), path: "")
        file.path = directory + "/" + file.fileName
        try FileManager.default.moveItem(atPath: building, toPath: file.path)
        return file
    }

    @Test func theNameRecordsWhatTheFileHolds() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try Self.file(Self.settings(directory.path), "p.1", version: 42, size: 100)
        let parsed = ReadyFile.parse(
            name: (file.path as NSString).lastPathComponent, partition: file.partition,
            directory: (file.path as NSString).deletingLastPathComponent, size: 100)
        #expect(parsed == file)
        for bad in ["v1-s2-k3-r4.db", "v1-s2-k3-r4-zz.db", "x1-s2-k3-r4-\(String(repeating: "0", count: 64)).db", "notes.txt"] {
            #expect(ReadyFile.parse(name: bad, partition: file.partition, directory: "/", size: 1) == nil, "\(bad)")
        }
    }

    @Test func pastItsBoundTheLeastRecentlyServedFileGoes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let settings = Self.settings(directory.path, maxBytes: 250)
        let cache = ReadyFileCache(settings: settings, logger: Logger(label: "test"))
        await cache.load()
        let a = try Self.file(settings, "a", version: 1, size: 100)
        let b = try Self.file(settings, "b", version: 1, size: 100)
        await cache.install(a)
        await cache.install(b)
        #expect(await cache.open(a, from: 0) != nil, "a served: b is now the least recently used")
        let c = try Self.file(settings, "c", version: 1, size: 100)
        await cache.install(c)
        #expect(await cache.current(PartitionName("b")!) == nil)
        #expect(!FileManager.default.fileExists(atPath: b.path), "evicted from disk")
        #expect(await cache.current(PartitionName("a")!) == a)
        #expect(await cache.current(PartitionName("c")!) == c)
        #expect(await cache.totalBytes == 200)
        // A newer file of a partition replaces its older one on disk.
        let a2 = try Self.file(settings, "a", version: 2, size: 100, byte: 2)
        await cache.install(a2)
        #expect(!FileManager.default.fileExists(atPath: a.path))
        #expect(await cache.current(PartitionName("a")!) == a2)
    }

    @Test func aFileLongerThanTheBoundIsNotKept() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let settings = Self.settings(directory.path, maxBytes: 50)
        let cache = ReadyFileCache(settings: settings, logger: Logger(label: "test"))
        let big = try Self.file(settings, "p", version: 1, size: 100)
        await cache.install(big)
        #expect(await cache.current(big.partition) == nil)
        #expect(!FileManager.default.fileExists(atPath: big.path))
    }

    @Test func atStartFilesAreCheckedAgainstTheirDigestsAndOnlyTheNewestIsKept() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let settings = Self.settings(directory.path)
        let old = try Self.file(settings, "p", version: 1, size: 100)
        let newest = try Self.file(settings, "p", version: 3, size: 100, byte: 3)
        let damaged = try Self.file(settings, "q", version: 1, size: 100)
        let handle = try #require(FileHandle(forUpdatingAtPath: damaged.path))
        try handle.seek(toOffset: 10)
        try handle.write(contentsOf: Data([0xff]))
        try handle.close()
        let halfBuilt = settings.cacheDirectory + "/p/.building-123.db"
        _ = FileManager.default.createFile(atPath: halfBuilt, contents: Data([1]))
        let cache = ReadyFileCache(settings: settings, logger: Logger(label: "test"))
        #expect(await !cache.isLoaded)
        await cache.load()
        #expect(await cache.isLoaded)
        let loaded = try #require(await cache.current(newest.partition))
        #expect(loaded.path == newest.path && loaded.digest == newest.digest)
        #expect(loaded.slices?.entries.count == 1, "compress is on: the slices a previous run did not keep are written")
        #expect(await cache.current(damaged.partition) == nil)
        for path in [old.path, damaged.path, halfBuilt] { #expect(!FileManager.default.fileExists(atPath: path), "\(path)") }
    }

    @Test func buildsAreCoalescedAndARefusedDigestIsCheckedOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let settings = Self.settings(directory.path)
        let cache = ReadyFileCache(settings: settings, logger: Logger(label: "test"))
        let p = PartitionName("p")!
        await cache.wantBuild(p, head: 5)
        await cache.wantBuild(p, head: 6)
        let file = try Self.file(settings, "p", version: 5, size: 10)
        await cache.install(file)
        await cache.refused(p, digest: file.digest)
        await cache.refused(p, digest: file.digest)
        await cache.refused(p, digest: [1, 2, 3])  // not the file it serves: ignored
        await cache.finished(.build(p))
        await cache.noteTooSmall(p, at: 9, rows: 10)
        await cache.wantBuild(p, head: 9)  // too small at 9: not asked again until a newer version
        await cache.wantBuild(p, head: 10)
        cache.close()
        var work: [ReadyFileCache.Work] = []
        for await item in cache.work { work.append(item) }
        #expect(work == [.build(p), .check(p, digest: file.digest), .build(p)])
    }

    @Test func aFileBuiltAcrossARestoreIsNotInstalled() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let settings = Self.settings(directory.path)
        let cache = ReadyFileCache(settings: settings, logger: Logger(label: "test"))
        let p = PartitionName("p")!
        let before = await cache.generation(of: p)
        await cache.historyRewritten(p)  // a restore while the build ran
        let file = try Self.file(settings, "p", version: 5, size: 10)
        await cache.install(file, generation: before)
        #expect(await cache.current(p) == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let rebuilt = try Self.file(settings, "p", version: 5, size: 10)
        await cache.install(rebuilt, generation: await cache.generation(of: p))
        #expect(await cache.current(p) != nil, "a build begun after the restore is installed")
    }
}
