import NIOCore
import TetherProtocol

/// A ready file opened for one session's download: opened when the bind is accepted, so a
/// newer file replacing it in the cache (or an eviction) does not cut a download under way —
/// the unlinked file lives until its last handle closes. With the file's compressed slices
/// (``ReadyFileSlices``) when the cache keeps them.
package final class ReadyFileHandle: Sendable {
    package let file: ReadyFile
    /// Where the session's download starts (a resumed download: the bytes the device holds).
    let startOffset: Int64
    private let content: ReadOnlyFile
    private let slices: (index: ReadyFileSlices, file: ReadOnlyFile)?

    init?(file: ReadyFile, startOffset: Int64) {
        // Gone or replaced meanwhile: nil, and the device gets rows.
        guard let content = try? ReadOnlyFile(file.path), content.size == file.size else { return nil }
        self.file = file
        self.startOffset = startOffset
        self.content = content
        self.slices = file.slices.flatMap { index in
            // Slices that do not open: the file's bytes go out as they are.
            (try? ReadOnlyFile(index.path)).flatMap { $0.size == index.size ? (index, $0) : nil }
        }
    }

    /// What goes out from `offset`: the compressed slice that starts there when one is kept,
    /// else the file's bytes up to the next slice boundary (or ~1 MiB without slices).
    func slice(at offset: Int64) -> (encoding: StateFileSlice.Encoding, count: Int) {
        if let (index, _) = slices {
            let i = Int(offset / Int64(index.sliceBytes))
            let range = index.range(of: i, fileSize: file.size)
            if range.lowerBound == offset, index.entries[i].length > 0 {
                return (.deflate(fileBytes: Int(range.count)), index.entries[i].length)
            }
            return (.raw, Int(range.upperBound - offset))
        }
        return (.raw, Int(min(Int64(ProtocolLimits.targetFileSliceBytes), file.size - offset)))
    }

    /// Appends the `count` bytes ``slice(at:)`` described for `offset` to `buffer`.
    func read(at offset: Int64, encoding: StateFileSlice.Encoding, count: Int, into buffer: inout ByteBuffer) throws {
        switch encoding {
        case .raw:
            try content.read(at: offset, count: count, into: &buffer)
        case .deflate:
            guard let (index, kept) = slices else { throw ReadyFileError.shortRead(path: file.path, offset: offset) }
            try kept.read(at: index.entries[Int(offset / Int64(index.sliceBytes))].offset, count: count, into: &buffer)
        }
    }
}
