import Foundation
import Glibc

/// Makes device and admin tokens: 32 bytes from the system's cryptographic random source
/// (`getrandom(2)` through `SystemRandomNumberGenerator`), written as 64 hex digits to a file
/// of mode 0600 that only its owner can read. The token itself is never logged.
package enum TokenMinter {
    /// A new token: 256 random bits as lower-case hex.
    package static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return String(byte, radix: 16).leftPadded(to: 2)
        }.joined()
    }

    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
        /// True when the file exists and replacing it was not asked for.
        package var exists: Bool
    }

    /// Writes `token` to `path` as a new file of mode 0600 (the whole file at once: a temporary
    /// file in the same directory, renamed over it), owned by `owner` (uid, gid) when given.
    /// An existing file is replaced only when `replace` is true. A missing directory is made,
    /// mode 0700, for the same owner (`/etc/tether/users`).
    package static func write(_ token: String, to path: String, owner: (uid: uid_t, gid: gid_t)?, replace: Bool) throws(Failure) {
        if !replace, FileManager.default.fileExists(atPath: path) {
            throw Failure(description: "\(path) exists; give --force to replace it (the old token stops working at the server's next reload)", exists: true)
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            guard mkdir(directory, 0o700) == 0 else {
                throw Failure(description: "cannot create \(directory): \(String(cString: strerror(errno)))", exists: false)
            }
            if let owner { _ = chown(directory, owner.uid, owner.gid) }
        }
        let temporary = "\(directory)/.\((path as NSString).lastPathComponent).\(getpid()).new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(temporary): \(String(cString: strerror(errno)))", exists: false) }
        let bytes = Array((token + "\n").utf8)
        var problem: String?
        if bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) != bytes.count {
            problem = "cannot write \(temporary): \(String(cString: strerror(errno)))"
        } else if fchmod(fd, 0o600) != 0 {
            problem = "cannot set the mode of \(temporary): \(String(cString: strerror(errno)))"
        } else if let owner, fchown(fd, owner.uid, owner.gid) != 0 {
            problem = "cannot give \(temporary) to uid \(owner.uid): \(String(cString: strerror(errno)))"
        } else if fsync(fd) != 0 {
            problem = "cannot write \(temporary): \(String(cString: strerror(errno)))"
        }
        close(fd)
        if problem == nil, rename(temporary, path) != 0 {
            problem = "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))"
        }
        if let problem {
            unlink(temporary)
            throw Failure(description: problem, exists: false)
        }
    }

    /// The uid and gid of the account `name`, if it exists.
    package static func account(_ name: String) -> (uid: uid_t, gid: gid_t)? {
        guard let entry = getpwnam(name) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
