import Foundation
import NIOCore
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport
@testable import TetherServer

/// A ready file's compressed slices (docs/server.md, "Ready files"): what the index records,
/// slices taken over from the previous version's file, and damage found.
@Suite struct ReadyFileSlicesTests {
    static let sliceBytes = ProtocolLimits.targetFileSliceBytes

    /// A file of `slices` slices and a half: text (compresses), one slice of noise (does not).
    static func content(slices: Int, changeAt: Int? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        let line = Array("INSERT INTO t VALUES (1, 'a row as text');\n".utf8)
        while bytes.count < slices * sliceBytes + sliceBytes / 2 { bytes += line }
        bytes = Array(bytes.prefix(slices * sliceBytes + sliceBytes / 2))
        var random = SeededRandom(seed: 7)
        for i in sliceBytes..<(2 * sliceBytes) { bytes[i] = UInt8(truncatingIfNeeded: random.next()) }
        if let changeAt { bytes[changeAt] ^= 0xff }
        return bytes
    }

    static func file(_ directory: String, _ bytes: [UInt8], version: Int64) throws -> ReadyFile {
        let path = directory + "/v\(version).db"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return ReadyFile(
            partition: PartitionName("p")!, version: ServerVersion(version: version, salt: 1), schemaVersion: 1, rows: 1,
            size: Int64(bytes.count), digest: try ReadyFileDigest.of(path: path), path: path)
    }

    @Test func eachSliceIsKeptCompressedUnlessItDoesNotPayAndServedFromItsBoundary() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = Self.content(slices: 3)
        var file = try Self.file(directory.path, bytes, version: 1)
        let (slices, reused) = try ReadyFileSlices.build(for: file, previous: nil)
        #expect(reused == 0)
        #expect(slices.path == directory.path + "/v1.slices")
        #expect(slices.entries.count == 4)
        #expect(slices.entries[1].length == 0, "noise is sent as it is")
        #expect(slices.entries.enumerated().allSatisfy { $0.offset == 1 || (1..<(Self.sliceBytes / 10)).contains($0.element.length) })
        #expect(ReadyFileSlices.read(path: slices.path, fileSize: file.size) == slices)
        #expect(ReadyFileSlices.read(path: slices.path, fileSize: file.size + Int64(Self.sliceBytes)) == nil, "another file's")
        #expect(slices.matches(filePath: file.path, fileSize: file.size))

        // What a session sends from each offset, and that the bytes inflate to the file's.
        file.slices = slices
        let handle = try #require(ReadyFileHandle(file: file, startOffset: 0))
        var offset: Int64 = 0
        var received: [UInt8] = []
        while offset < file.size {
            let (encoding, count) = handle.slice(at: offset)
            var buffer = ByteBuffer()
            try handle.read(at: offset, encoding: encoding, count: count, into: &buffer)
            let sent = buffer.readBytes(length: buffer.readableBytes) ?? []
            switch encoding {
            case .raw: received += sent
            case .deflate(let fileBytes): received += try #require(ReadyFileSliceCodec.inflate(sent, fileBytes: fileBytes))
            }
            offset = Int64(received.count)
        }
        #expect(received == bytes)
        // A download resumed off a boundary gets the file's bytes up to the next one, then slices.
        #expect(handle.slice(at: 100) == (.raw, Self.sliceBytes - 100))
        #expect(handle.slice(at: Int64(2 * Self.sliceBytes)) == (.deflate(fileBytes: Self.sliceBytes), slices.entries[2].length))
    }

    @Test func slicesThatDidNotChangeAreTakenFromThePreviousFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var previous = try Self.file(directory.path, Self.content(slices: 3), version: 1)
        previous.slices = try ReadyFileSlices.build(for: previous, previous: nil).slices
        let next = try Self.file(directory.path, Self.content(slices: 3, changeAt: 2 * Self.sliceBytes + 5), version: 2)
        let (slices, reused) = try ReadyFileSlices.build(for: next, previous: previous)
        #expect(reused == 2, "slices 0 and 3 are unchanged; 1 is not kept, 2 changed")
        #expect(slices.matches(filePath: next.path, fileSize: next.size))
    }

    @Test func damagedSlicesAreFoundAndAFileWithoutValidSlicesIsServedAsItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var file = try Self.file(directory.path, Self.content(slices: 2), version: 1)
        let slices = try ReadyFileSlices.build(for: file, previous: nil).slices
        let handle = try #require(FileHandle(forUpdatingAtPath: slices.path))
        try handle.seek(toOffset: UInt64(slices.entries[0].offset) + 20)
        try handle.write(contentsOf: Data([0x00, 0xff, 0x00, 0xff]))
        try handle.close()
        #expect(!slices.matches(filePath: file.path, fileSize: file.size))
        // A cut .slices file (its footer gone) is none at all.
        try FileManager.default.removeItem(atPath: slices.path)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: slices.path))
        #expect(ReadyFileSlices.read(path: slices.path, fileSize: file.size) == nil)
        file.slices = nil
        let plain = try #require(ReadyFileHandle(file: file, startOffset: 0))
        #expect(plain.slice(at: 0) == (.raw, Self.sliceBytes))
    }
}
