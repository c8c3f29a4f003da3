import Foundation
import Glibc

/// Writes a credential to `[server] token_file` so that a crash at any instant leaves either
/// the old file or the new one, whole: a temp file in the same directory (created exclusively,
/// mode 0600, never following a link), written, `fsync`ed, renamed over the token file, then
/// the directory `fsync`ed. The file keeps the owner and group of the token file it replaces;
/// a new one gets `owner` when given (`tetherctl enroll` run as root gives the agent's user).
/// Temp files a crash left (`.<name>.tmp-*`) are removed first.
package enum CredentialWriter {
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "cannot write \(path): \(reason)" }
    }

    /// Owner and group for a file.
    package struct Owner: Sendable, Hashable {
        package var uid: uid_t
        package var gid: gid_t

        package init(uid: uid_t, gid: gid_t) {
            self.uid = uid
            self.gid = gid
        }

        /// The owner of `path`, nil when it cannot be read.
        package static func of(_ path: String) -> Owner? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return Owner(uid: info.st_uid, gid: info.st_gid)
        }
    }

    package static func write(_ credential: String, to path: String, newFileOwner owner: Owner? = nil) throws(Failure) {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        let name = String(path[path.index(after: slash)...])
        removeLeftovers(in: directory, name: name)
        let chosenOwner = Owner.of(path) ?? owner
        var random = SystemRandomNumberGenerator()
        let temp = "\(directory)/.\(name).tmp-\(String(random.next() as UInt64, radix: 16))"
        let descriptor = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(path: path, reason: "cannot create \(temp): \(errorText())") }
        var renamed = false
        defer {
            if !renamed { unlink(temp) }
        }
        do {
            defer { close(descriptor) }
            guard fchmod(descriptor, 0o600) == 0 else { throw Failure(path: path, reason: "chmod 600 \(temp): \(errorText())") }
            if geteuid() == 0, let chosenOwner, fchown(descriptor, chosenOwner.uid, chosenOwner.gid) != 0 {
                throw Failure(path: path, reason: "chown \(chosenOwner.uid):\(chosenOwner.gid) \(temp): \(errorText())")
            }
            let bytes = Array((credential + "\n").utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw Failure(path: path, reason: "write \(temp): \(errorText())") }
                written += count
            }
            guard fsync(descriptor) == 0 else { throw Failure(path: path, reason: "fsync \(temp): \(errorText())") }
        }
        guard rename(temp, path) == 0 else { throw Failure(path: path, reason: "rename \(temp): \(errorText())") }
        renamed = true
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryDescriptor >= 0 else { throw Failure(path: path, reason: "open \(directory): \(errorText())") }
        defer { close(directoryDescriptor) }
        guard fsync(directoryDescriptor) == 0 else { throw Failure(path: path, reason: "fsync \(directory): \(errorText())") }
    }

    /// Temp files of an earlier write that did not finish (a crash): never a whole credential
    /// anyone relies on.
    private static func removeLeftovers(in directory: String, name: String) {
        let prefix = ".\(name).tmp-"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }  // unlistable: the write fails with its own error
        for entry in entries where entry.hasPrefix(prefix) { unlink("\(directory)/\(entry)") }
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
