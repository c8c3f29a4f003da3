import Foundation
import Glibc
import TetherProtocol

/// `[server] enrollment_key_file`: the enrollment key (`tek1.<key id>.<secret>`, as
/// `tether-server admin enroll-key create` printed it), in a file only its owner may read —
/// like an SSH private key, a file readable by group or others is refused. Read when the
/// configuration is loaded (its form is checked, the key is not kept) and again at each
/// enrollment. The key is never logged.
package enum EnrollmentKeyFile {
    /// Why a key file cannot be used; the description names the file, never the key.
    package enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        case missing(path: String)
        case unreadable(path: String, reason: String)
        case notRegular(path: String)
        case tooOpen(path: String, mode: mode_t)
        case malformed(path: String)

        package var description: String {
            switch self {
            case .missing(let path): "\(path) does not exist; install the key printed by tether-server admin enroll-key create"
            case .unreadable(let path, let reason): "\(path): \(reason)"
            case .notRegular(let path): "\(path) is not a regular file"
            case .tooOpen(let path, let mode):
                "\(path) is readable by group or others (mode \(String(mode, radix: 8))): an enrollment key must be private, as an SSH private key is; run chmod 600 \(path)"
            case .malformed(let path):
                "\(path) does not hold an enrollment key (tek1.<16 hex digits>.<43 characters>, as tether-server admin enroll-key create prints it)"
            }
        }
    }

    /// The key of `path`, checked: a regular file, not readable by group or others, readable
    /// by this user, holding one key (surrounding white space ignored).
    package static func read(_ path: String) throws(Problem) -> EnrollmentKeyText {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { throw .missing(path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegular(path: path) }
        if info.st_mode & 0o044 != 0 { throw .tooOpen(path: path, mode: info.st_mode & 0o777) }
        // A key is about 70 bytes: a larger file is not one (and is not read whole).
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .unreadable(path: path, reason: "not readable by this user")
        }
        defer { try? handle.close() }  // read-only: nothing is lost by a failed close
        let data: Data
        do {
            data = try handle.read(upToCount: 4_096) ?? Data()
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        guard data.count < 4_096, let text = String(data: data, encoding: .utf8), let key = EnrollmentKeyText(parsing: text) else {
            throw .malformed(path: path)
        }
        return key
    }
}
