import Glibc
import TetherProtocol

/// A ready-file download that cannot be used. Transient: the next bind asks for rows (after a
/// mismatch) or starts the file over; nothing of the store is touched.
enum ReadyFileDownloadError: Error, CustomStringConvertible {
    case checksumMismatch(partition: PartitionName)
    case damagedSlice(partition: PartitionName, offset: Int64)
    case unexpected(partition: PartitionName, String)
    case unusable(partition: PartitionName, String)
    case io(path: String, operation: String, errno: Int32)

    var description: String {
        switch self {
        case .checksumMismatch(let partition):
            "the ready file of \(partition) does not match its SHA-256; it was removed and the next bind asks for rows"
        case .damagedSlice(let partition, let offset):
            "a compressed slice of the ready file of \(partition) (at byte \(offset)) is damaged; the file was removed and the next bind asks for rows"
        case .unexpected(let partition, let what):
            "the ready-file download of \(partition) was given \(what); it starts over"
        case .unusable(let partition, let why):
            "the ready file of \(partition) matched its SHA-256 but cannot be used (\(why)); it was removed and the next bind asks for rows"
        case .io(let path, let operation, let code):
            "\(operation) \(path): \(String(cString: strerror(code)))"
        }
    }
}
