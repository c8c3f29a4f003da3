import Glibc
import NIOCore

/// A file opened read-only (no symlink followed) for reads at offsets; closed with its last
/// reference. An unlinked file stays readable while it is open.
final class ReadOnlyFile: Sendable {
    let path: String
    /// The size when opened.
    let size: Int64
    private let descriptor: Int32

    init(_ path: String) throws {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw ReadyFileError.io(path: path, operation: "open", errno: errno) }
        self.path = path
        self.descriptor = fd
        self.size = Int64(lseek(fd, 0, SEEK_END))
    }

    deinit { Glibc.close(descriptor) }

    /// `count` bytes from `offset`; throws on a short read.
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try fill(UnsafeMutableRawBufferPointer(buffer), from: offset)
            initialized = count
        }
    }

    /// Appends `count` bytes from `offset` to `buffer`; throws on a short read.
    func read(at offset: Int64, count: Int, into buffer: inout ByteBuffer) throws {
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            try fill(UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]), from: offset)
            return count
        }
    }

    private func fill(_ target: UnsafeMutableRawBufferPointer, from offset: Int64) throws {
        var done = 0
        while done < target.count {
            let n = pread(descriptor, target.baseAddress! + done, target.count - done, off_t(offset) + off_t(done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ReadyFileError.shortRead(path: path, offset: offset + Int64(done)) }
            done += n
        }
    }
}
