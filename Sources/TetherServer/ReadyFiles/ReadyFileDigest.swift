import Crypto
import Glibc

/// The SHA-256 of a file, read in 1 MiB pieces.
enum ReadyFileDigest {
    static func of(path: String) throws -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw ReadyFileError.io(path: path, operation: "open", errno: errno) }
        defer { Glibc.close(fd) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw ReadyFileError.io(path: path, operation: "read", errno: errno) }
            if n == 0 { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        return Array(hasher.finalize())
    }
}
