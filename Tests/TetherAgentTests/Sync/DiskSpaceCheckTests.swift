import Foundation
import Testing
import TetherProtocol
@testable import TetherAgent

/// Issue 32: a state download is refused before it fills the disk.
@Suite struct DiskSpaceCheckTests {
    static let mebibyte: Int64 = 1 << 20

    static func progress(total: Int64, done: Int64 = 0) -> DownloadProgress {
        DownloadProgress(rowsDone: 0, rowsTotal: 10, bytesDone: done, bytesTotal: total)
    }

    @Test func aStateLargerThanTheFreeSpaceIsRefusedNamingPathNeededAndFree() throws {
        let claimed = 100 * Self.mebibyte
        let space = DiskSpaceCheck(freeBytes: { _ in claimed })
        var refused: DiskSpaceError?
        do {
            try space.check(directories: ["/var/lib/tether/staging"], progress: Self.progress(total: 1 << 30), written: 0, chunk: 4096)
        } catch { refused = error }
        let error = try #require(refused)
        #expect(error.path == "/var/lib/tether/staging")
        #expect(error.free == claimed)
        #expect(error.needed == (1 << 30) + (1 << 28) + DiskSpaceCheck.reserve)
        #expect(error.isTransient)
        #expect(error.description.contains("/var/lib/tether/staging") && error.description.contains("\(error.needed) bytes needed"))
        #expect(error.description.contains("\(claimed) bytes free"))
    }

    @Test func aStateThatFitsWithItsMarginPasses() throws {
        let space = DiskSpaceCheck(freeBytes: { _ in 200 * Self.mebibyte })
        try space.check(directories: ["/s"], progress: Self.progress(total: 100 * Self.mebibyte), written: 0, chunk: 4096)
        // What was written already no longer counts.
        try DiskSpaceCheck(freeBytes: { _ in 40 * Self.mebibyte })
            .check(directories: ["/s"], progress: Self.progress(total: 100 * Self.mebibyte), written: 99 * Self.mebibyte, chunk: 4096)
    }

    @Test func theReserveIsKeptEvenForATinyState() {
        let space = DiskSpaceCheck(freeBytes: { _ in DiskSpaceCheck.reserve })
        #expect(throws: DiskSpaceError.self) {
            try space.check(directories: ["/s"], progress: Self.progress(total: 10), written: 0, chunk: 10)
        }
    }

    @Test func withoutAnAnnouncedTotalEachChunkIsChecked() {
        #expect(DiskSpaceCheck.needed(announcedTotal: 0, written: 5 << 30, chunk: 1000) == 1000 + 250 + DiskSpaceCheck.reserve)
        let space = DiskSpaceCheck(freeBytes: { _ in DiskSpaceCheck.reserve + 1000 })
        #expect(throws: DiskSpaceError.self) {
            try space.check(directories: ["/s"], progress: Self.progress(total: 0), written: 0, chunk: 1000)
        }
    }

    @Test func everyFileSystemIsCheckedAndAnUnknownOneIsNotHeldAgainstTheDownload() throws {
        let space = DiskSpaceCheck(freeBytes: { path in path == "/stores" ? Self.mebibyte : nil })
        var refused: DiskSpaceError?
        do {
            try space.check(directories: ["/state/staging", "/stores"], progress: Self.progress(total: 8 * Self.mebibyte), written: 0, chunk: 1)
        } catch { refused = error }
        #expect(refused?.path == "/stores")
        try DiskSpaceCheck(freeBytes: { _ in nil })
            .check(directories: ["/s"], progress: Self.progress(total: Int64.max), written: 0, chunk: 1)
    }

    @Test func theLiveReaderSeesTheRealFileSystem() throws {
        let free = try #require(DiskSpaceCheck.statvfsFreeBytes("/tmp"))
        #expect(free >= 0)
        #expect(DiskSpaceCheck.statvfsFreeBytes("/nonexistent-\(UUID().uuidString)") == nil)
        #expect(DiskSpaceCheck.needed(announcedTotal: Int64.max, written: 0, chunk: 1) == Int64.max, "no overflow")
    }

    @Test func aSmallFileSystemKeepsATwentiethFree() throws {
        #expect(DiskSpaceCheck.reserve(capacity: 16 * Self.mebibyte) == 16 * Self.mebibyte / 20)
        #expect(DiskSpaceCheck.reserve(capacity: 100 << 30) == DiskSpaceCheck.reserve)
        #expect(DiskSpaceCheck.reserve(capacity: nil) == DiskSpaceCheck.reserve)
        // A 16 MiB disk with 10 MiB free takes a state of 1 MiB.
        let small = DiskSpaceCheck(freeBytes: { _ in 10 * Self.mebibyte }, capacityBytes: { _ in 16 * Self.mebibyte })
        try small.check(
            directories: ["/stores"], progress: DownloadProgress(rowsDone: 0, rowsTotal: 1, bytesDone: 0, bytesTotal: Self.mebibyte),
            written: 0, chunk: Self.mebibyte)
    }
}
