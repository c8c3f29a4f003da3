import Dispatch
import Glibc
import NIOCore
import Synchronization
import TetherProtocol
import TetherStore

/// A ready file's slices compressed (docs/server.md, "Ready files"), kept beside it as
/// `<name>.slices`: built once with the file, so serving a slice compressed costs a `pread`.
/// The file is cut at multiples of ``sliceBytes``; a slice that does not compress by a tenth is
/// not kept and goes out as the file's bytes.
///
/// Layout: the zlib streams one after the other; then the index, per slice its offset (8 bytes)
/// and length (4 bytes; 0: not kept); then the footer: slice size (4), slice count (4), the
/// index's offset (8) and the magic `TTHRSLC1`. Integers little-endian.
package struct ReadyFileSlices: Sendable, Hashable {
    package struct Entry: Sendable, Hashable {
        package var offset: Int64
        /// 0: the slice is sent as the file's bytes.
        package var length: Int
    }

    package var path: String
    package var sliceBytes: Int
    package var entries: [Entry]
    /// The `.slices` file's own size.
    package var size: Int64

    static let magic: [UInt8] = Array("TTHRSLC1".utf8)
    static let footerBytes = 24
    static let entryBytes = 12

    /// Where the slices of the ready file at `filePath` are kept.
    static func path(for filePath: String) -> String {
        (filePath.hasSuffix(".db") ? String(filePath.dropLast(3)) : filePath) + ".slices"
    }

    /// The range of the file the slice at `index` covers, in a file of `fileSize` bytes.
    func range(of index: Int, fileSize: Int64) -> Range<Int64> {
        let start = Int64(index) * Int64(sliceBytes)
        return start..<min(start + Int64(sliceBytes), fileSize)
    }

    /// Writes the slices of `file` beside it (`previous` as in ``write(filePath:fileSize:to:previous:)``):
    /// into a `.building-` file first, renamed over any slices there, so that a download reading
    /// the old ones keeps reading them. Returns them and how many were taken from `previous`.
    /// (A new file's builder writes them before it names the file, so that its slices are in
    /// place when it appears.)
    static func build(for file: ReadyFile, previous: ReadyFile?) throws -> (slices: ReadyFileSlices, reused: Int) {
        let final = path(for: file.path)
        let directory = String(file.path[..<(file.path.lastIndex(of: "/") ?? file.path.startIndex)])
        let building = directory + "/.building-\(UInt64.random(in: 1...UInt64.max)).slices"
        do {
            var (slices, reused) = try write(filePath: file.path, fileSize: file.size, to: building, previous: previous)
            guard rename(building, final) == 0 else { throw ReadyFileError.io(path: final, operation: "rename", errno: errno) }
            slices.path = final
            return (slices, reused)
        } catch {
            unlink(building)
            throw error
        }
    }

    /// Compresses the file at `filePath` into `path`, slice by slice, a batch of slices at a
    /// time on every core (``System/coreCount``), written in order. A slice whose bytes equal
    /// the same slice of `previous` (the file this one was brought up to date from: most of its
    /// pages did not change) takes its compressed stream from there instead of compressing again.
    static func write(
        filePath: String, fileSize: Int64, to path: String, previous: ReadyFile?
    ) throws -> (slices: ReadyFileSlices, reused: Int) {
        let sliceBytes = ProtocolLimits.targetFileSliceBytes
        let source = try ReadOnlyFile(filePath)
        let earlier = Earlier(previous)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard fd >= 0 else { throw ReadyFileError.io(path: path, operation: "open", errno: errno) }
        defer { Glibc.close(fd) }
        var slices = ReadyFileSlices(path: path, sliceBytes: sliceBytes, entries: [], size: 0)
        var reused = 0
        var written: Int64 = 0
        let count = Int((fileSize + Int64(sliceBytes) - 1) / Int64(sliceBytes))
        let batch = max(1, System.coreCount)
        for first in stride(from: 0, to: count, by: batch) {
            let indices = first..<min(first + batch, count)
            var inputs: [[UInt8]] = []
            var streams: [[UInt8]?] = []
            for index in indices {
                let range = slices.range(of: index, fileSize: fileSize)
                let bytes = try source.read(at: range.lowerBound, count: Int(range.count))
                let kept = try earlier?.stream(index, range: range, bytes: bytes)
                if kept != nil { reused += 1 }
                inputs.append(bytes)
                streams.append(kept)
            }
            let (toCompress, kept) = (inputs, streams)
            let compressed = Mutex(streams)
            DispatchQueue.concurrentPerform(iterations: toCompress.count) { position in
                guard kept[position] == nil else { return }
                let stream = toCompress[position].withUnsafeBytes { ReadyFileSliceCodec.deflate($0) }
                compressed.withLock { $0[position] = stream }
            }
            for stream in compressed.withLock({ $0 }) {
                if let stream {
                    try writeAll(fd, stream, at: written, path: path)
                    slices.entries.append(Entry(offset: written, length: stream.count))
                    written += Int64(stream.count)
                } else {
                    slices.entries.append(Entry(offset: 0, length: 0))
                }
            }
        }
        var tail = ByteWriterLE()
        for entry in slices.entries {
            tail.append(UInt64(entry.offset))
            tail.append(UInt32(entry.length))
        }
        tail.append(UInt32(sliceBytes))
        tail.append(UInt32(slices.entries.count))
        tail.append(UInt64(written))
        tail.bytes += magic
        try writeAll(fd, tail.bytes, at: written, path: path)
        guard fsync(fd) == 0 else { throw ReadyFileError.io(path: path, operation: "fsync", errno: errno) }
        slices.size = written + Int64(tail.bytes.count)
        return (slices, reused)
    }

    /// The index of the slices kept at `path` for a file of `fileSize` bytes; nil when there
    /// are none or they do not fit that file.
    static func read(path: String, fileSize: Int64) -> ReadyFileSlices? {
        guard let file = try? ReadOnlyFile(path) else { return nil }  // none, or unreadable: written again
        let size = file.size
        // A footer or index that does not read: they do not fit, and are written again.
        guard size >= Int64(footerBytes), let footer = try? file.read(at: size - Int64(footerBytes), count: footerBytes),
            Array(footer[16..<24]) == magic
        else { return nil }
        let sliceBytes = Int(footer.le32(at: 0)), count = Int(footer.le32(at: 4)), indexOffset = Int64(footer.le64(at: 8))
        guard sliceBytes > 0, sliceBytes <= ProtocolLimits.maxFileSliceBytes,
            Int64(count) == (fileSize + Int64(sliceBytes) - 1) / Int64(sliceBytes),
            indexOffset + Int64(count * entryBytes + footerBytes) == size,
            let index = try? file.read(at: indexOffset, count: count * entryBytes)  // as above
        else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for i in 0..<count {
            let entry = Entry(offset: Int64(index.le64(at: i * entryBytes)), length: Int(index.le32(at: i * entryBytes + 8)))
            guard entry.length <= ProtocolLimits.maxFileSliceBytes, entry.offset + Int64(entry.length) <= indexOffset else { return nil }
            entries.append(entry)
        }
        return ReadyFileSlices(path: path, sliceBytes: sliceBytes, entries: entries, size: size)
    }

    /// Whether every kept slice inflates to the file's bytes at its place (a device refused the
    /// file: the slices are checked with it).
    func matches(filePath: String, fileSize: Int64) -> Bool {
        // What cannot be read does not match: the slices are written again.
        guard let file = try? ReadOnlyFile(filePath), let kept = try? ReadOnlyFile(path) else { return false }
        for (index, entry) in entries.enumerated() where entry.length > 0 {
            let range = range(of: index, fileSize: fileSize)
            guard let stream = try? kept.read(at: entry.offset, count: entry.length),  // as above
                let bytes = ReadyFileSliceCodec.inflate(stream, fileBytes: Int(range.count)),
                (try? file.read(at: range.lowerBound, count: Int(range.count))) == bytes  // as above
            else { return false }
        }
        return true
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, path: String) throws {
        if let code = PositionalWrite.all(fd, bytes, at: offset) { throw ReadyFileError.io(path: path, operation: "write", errno: code) }
    }
}

/// The previous version's file and its slices, opened, to take the unchanged slices from.
private struct Earlier {
    let slices: ReadyFileSlices
    let fileSize: Int64
    let file: ReadOnlyFile
    let kept: ReadOnlyFile

    /// Nil without a previous file, without its slices, or with slices of another size.
    init?(_ previous: ReadyFile?) {
        guard let previous, let slices = previous.slices, slices.sliceBytes == ProtocolLimits.targetFileSliceBytes,
            // Files that do not open: every slice is compressed afresh.
            let file = try? ReadOnlyFile(previous.path), let kept = try? ReadOnlyFile(slices.path)
        else { return nil }
        (self.slices, self.fileSize, self.file, self.kept) = (slices, previous.size, file, kept)
    }

    /// The stream kept for slice `index` when that slice covered the same `range` and held
    /// exactly `bytes`; nil otherwise (or when it was not kept).
    func stream(_ index: Int, range: Range<Int64>, bytes: [UInt8]) throws -> [UInt8]? {
        guard index < slices.entries.count, slices.range(of: index, fileSize: fileSize) == range else { return nil }
        let entry = slices.entries[index]
        guard entry.length > 0, try file.read(at: range.lowerBound, count: Int(range.count)) == bytes else { return nil }
        return try kept.read(at: entry.offset, count: entry.length)
    }
}

/// Little-endian integers appended to bytes.
private struct ByteWriterLE {
    var bytes: [UInt8] = []
    mutating func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    mutating func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
}

extension [UInt8] {
    fileprivate func le32(at i: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(self[i + $1]) << (8 * UInt32($1)) }
    }
    fileprivate func le64(at i: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(self[i + $1]) << (8 * UInt64($1)) }
    }
}
