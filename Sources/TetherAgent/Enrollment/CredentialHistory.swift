import Foundation
import Glibc
import TetherProtocol

/// The credentials this device held before its current one, newest first, in a file beside
/// `[server] token_file` (`<token_file>.earlier`, mode 0600, written whole like the token file
/// by ``CredentialWriter``). A server whose database was put back from a backup taken before a
/// rotation knows the device by one of them; the agent offers them, one bind at a time, when
/// the server refuses the current one (``CredentialFallback``; docs/server.md "A server
/// database put back from an older backup").
///
/// Only credentials of this device (its state database's id) are kept or offered: the file a
/// golden image carries names the image's device, and a clone never binds with it.
package enum CredentialHistory {
    /// How many earlier credentials are kept (a server restored from a backup older than this
    /// many rotations does not know the device: it enrolls again, docs/server.md).
    package static let limit = 8

    /// `<token_file>.earlier`.
    package static func path(forTokenFile tokenFile: String) -> String { tokenFile + ".earlier" }

    /// The earlier credentials of `deviceID`, newest first, without `current`, at most
    /// ``limit``; none when the file is missing or cannot be read (nothing to fall back to).
    package static func read(tokenFile: String, deviceID: String, excluding current: String? = nil) -> [String] {
        let path = path(forTokenFile: tokenFile)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return [] }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        guard let data = try? handle.read(upToCount: 64 * 1024) else { return [] }
        return kept(
            String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) },
            deviceID: deviceID, excluding: current)
    }

    /// Before `tokenFile` is replaced by another credential of `deviceID` (a rotation, an
    /// enrollment again): the credential it holds now, when it is one of that device, becomes
    /// the newest earlier one. Credentials of another device are dropped from the file.
    package static func remember(currentOf tokenFile: String, deviceID: String) throws(CredentialWriter.Failure) {
        let current = currentCredential(tokenFile, deviceID: deviceID)
        let earlier = read(tokenFile: tokenFile, deviceID: deviceID, excluding: current)
        try write((current.map { [$0] } ?? []) + earlier, tokenFile: tokenFile)
    }

    /// Replaces the file with `credentials` (newest first; only the first ``limit`` kept); an
    /// empty list removes it.
    package static func write(_ credentials: [String], tokenFile: String) throws(CredentialWriter.Failure) {
        let path = path(forTokenFile: tokenFile)
        let kept = Array(credentials.prefix(limit))
        guard !kept.isEmpty else {
            if unlink(path) != 0 && errno != ENOENT {
                throw CredentialWriter.Failure(path: path, reason: "unlink: \(String(cString: strerror(errno)))")
            }
            return
        }
        try CredentialWriter.write(kept.joined(separator: "\n"), to: path, newFileOwner: CredentialWriter.Owner.of(tokenFile))
    }

    /// The credential of `deviceID` `tokenFile` holds, nil for anything else.
    package static func currentCredential(_ tokenFile: String, deviceID: String) -> String? {
        guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            DeviceCredential(parsing: text)?.deviceID == deviceID
        else { return nil }
        return text
    }

    /// `lines` as kept: credentials of `deviceID` only, each once, not `current`, at most ``limit``.
    static func kept(_ lines: [String], deviceID: String, excluding current: String?) -> [String] {
        var seen: Set<String> = current.map { [$0] } ?? []
        var result: [String] = []
        for line in lines where DeviceCredential(parsing: line)?.deviceID == deviceID && seen.insert(line).inserted {
            result.append(line)
            if result.count == limit { break }
        }
        return result
    }
}
