import Glibc
import NIOCore

/// A ready file opened for one session's download: opened when the bind is accepted, so a
/// newer file replacing it in the cache (or an eviction) does not cut a download under way —
/// the unlinked file lives until its last handle closes.
public final class ReadyFileHandle: Sendable {
    public let file: ReadyFile
    /// Where the session's download starts (a resumed download: the bytes the device holds).
    let startOffset: Int64
    private let descriptor: Int32

    init?(file: ReadyFile, startOffset: Int64) {
        let fd = Glibc.open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        guard Int64(lseek(fd, 0, SEEK_END)) == file.size else {
            Glibc.close(fd)
            return nil
        }
        self.file = file
        self.startOffset = startOffset
        self.descriptor = fd
    }

    deinit { Glibc.close(descriptor) }

    /// Appends `count` bytes of the file from `offset` to `buffer`; throws on a short read.
    func read(at offset: Int64, count: Int, into buffer: inout ByteBuffer) throws {
        var done = 0
        while done < count {
            var n = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { raw in
                n = pread(descriptor, raw.baseAddress, count - done, off_t(offset) + off_t(done))
                return max(n, 0)
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ReadyFileError.shortRead(path: file.path, offset: offset + Int64(done)) }
            done += n
        }
    }
}
