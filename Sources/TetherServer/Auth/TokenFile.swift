import Foundation
import Glibc

/// Reads a token file: its content without surrounding whitespace.
package enum TokenFile {
    package static func read(_ path: String) -> Result<String, TokenFileError> {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            return .failure(TokenFileError(description: "cannot read token file \(path): \(Self.reason(error))"))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return .failure(TokenFileError(description: "token file \(path) is not UTF-8 text"))
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { return .failure(TokenFileError(description: "token file \(path) is empty")) }
        return .success(token)
    }

    /// Why a token file must not be used although it can be read: readable by group or others
    /// (the server refuses it at start and reload, as tetherd does), or nil.
    package static func permissionProblem(_ path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = attributes[.posixPermissions] as? Int
        else { return nil }  // reading it reported the problem already
        guard mode & 0o044 == 0 else {
            return "token file \(path) is readable by group or others (mode \(String(mode & 0o777, radix: 8))); run chmod 600 \(path)"
        }
        return nil
    }

    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSCocoaErrorDomain, nsError.code == NSFileReadNoSuchFileError { return "no such file" }
        if nsError.domain == NSCocoaErrorDomain, nsError.code == NSFileReadNoPermissionError { return "permission denied" }
        return nsError.localizedDescription
    }
}

package struct TokenFileError: Error, Sendable, CustomStringConvertible {
    package var description: String
}
