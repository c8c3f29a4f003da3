import Foundation
import Glibc
import TetherProtocol

/// What `[server] token_file` holds, as the decision to enroll sees it: nothing (missing,
/// empty), a device credential (`tdc1.<device id>.…`, and for which device), another token (a
/// `[[user]]` token), or a file that cannot be read. The secret is not kept.
package enum TokenFile: Sendable, Hashable {
    case missing
    /// Empty, or white space only.
    case empty
    /// A device credential issued to the device `deviceID`.
    case credential(deviceID: String)
    /// A token that is not a device credential (a `[[user]]` token): used as it is.
    case token
    /// It exists but cannot be read (the bind reports why, as for any token).
    case unreadable(String)

    /// Reads `path` (at most 4 KiB: a token is shorter).
    package static func inspect(_ path: String) -> TokenFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return errno == ENOENT ? .missing : .unreadable("\(path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let data: Data
        do {
            data = try handle.read(upToCount: 4_096) ?? Data()
        } catch {
            return .unreadable("\(path): \(error)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty { return .empty }
        if let credential = DeviceCredential(parsing: text) { return .credential(deviceID: credential.deviceID) }
        return .token
    }

    /// Nothing a bind could send.
    package var isMissingOrEmpty: Bool { self == .missing || self == .empty }
}
