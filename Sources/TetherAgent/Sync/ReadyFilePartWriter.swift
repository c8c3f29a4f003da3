import Crypto
import Glibc
import TetherStore

/// The part file of a ready-file download: written at increasing offsets and hashed as it goes.
final class ReadyFilePartWriter {
    let digest: [UInt8]
    let size: Int64
    private(set) var written: Int64
    private let path: String
    private var fd: Int32
    private var hasher = SHA256()

    init(path: String, digest: [UInt8], size: Int64, resumeAt offset: Int64) throws {
        self.path = path
        self.digest = digest
        self.size = size
        self.written = offset
        let flags = offset == 0 ? O_WRONLY | O_CREAT | O_TRUNC : O_RDWR
        fd = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ReadyFileDownloadError.io(path: path, operation: "open", errno: errno) }
        if offset > 0 {
            do { try hashPrefix(offset) } catch {
                close()
                throw error
            }
        }
    }

    deinit { close() }

    /// A resumed download hashes what it already holds.
    private func hashPrefix(_ count: Int64) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var done: Int64 = 0
        while done < count {
            let want = Int(min(Int64(buffer.count), count - done))
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ReadyFileDownloadError.io(path: path, operation: "read", errno: n < 0 ? errno : EIO) }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            done += Int64(n)
        }
    }

    func write(_ bytes: [UInt8]) throws {
        if let code = PositionalWrite.all(fd, bytes, at: written) {
            throw ReadyFileDownloadError.io(path: path, operation: "write", errno: code)
        }
        hasher.update(data: bytes)
        written += Int64(bytes.count)
    }

    /// Syncs and closes the file; returns its digest.
    func finish() -> [UInt8] {
        fsync(fd)
        close()
        return Array(hasher.finalize())
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}
