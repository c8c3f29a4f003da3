#if canImport(Glibc)
import Glibc
#endif

/// `pwrite(2)` until every byte is written (short writes and `EINTR` continue): the ready
/// file's part on a device and its compressed slices on the server.
package enum PositionalWrite {
    /// Writes `bytes` at `offset` of `fd`; returns nil, or the `errno` of the write that failed
    /// (`EIO` for a write that wrote nothing).
    package static func all(_ fd: Int32, _ bytes: [UInt8], at offset: Int64) -> Int32? {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return n < 0 ? errno : EIO }
            done += n
        }
        return nil
    }
}
