import TetherProtocol
import TetherSyncClient

/// Why an enrollment did not give this device a credential: the server's refusal (its code,
/// HTTP status, hint and `Retry-After`), no answer (unreachable, TLS, a key not pinned), an
/// answer that is not the contract's, the key file, or a credential that could not be written.
/// `code` names it in logs and events (the server's code, or one of the agent's own below);
/// `isTransient`: the same attempt may succeed later without anyone changing anything.
package struct EnrollmentError: Error, Sendable, Hashable, CustomStringConvertible {
    package var code: String
    package var message: String
    package var hint: String
    package var isTransient: Bool
    /// The HTTP status of an answer (nil: none came).
    package var httpStatus: Int?
    /// The server's `Retry-After`: the next attempt waits at least this long.
    package var retryAfter: Duration?

    package init(code: String, message: String, hint: String, isTransient: Bool, httpStatus: Int? = nil, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
        self.isTransient = isTransient
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
    }

    /// The contract's code, when the server's is one this release knows.
    package var knownCode: EnrollmentErrorCode? { EnrollmentErrorCode(rawValue: code) }

    package var description: String { "\(message) (\(code); hint: \(hint))" }

    /// The server refused: its code (kept as given, even one this release does not know),
    /// message and hint. Transient as the contract says, or by the status for an unknown code.
    package static func refused(code: String, message: String, hint: String?, status: Int, retryAfter: Duration?) -> EnrollmentError {
        let known = EnrollmentErrorCode(rawValue: code)
        let transient = known?.isTransient ?? Self.isTransient(status: status)
        return EnrollmentError(
            code: code, message: "the server refused the enrollment: \(message)",
            hint: hint ?? known?.hint ?? "see the server's log", isTransient: transient, httpStatus: status, retryAfter: retryAfter)
    }

    /// No answer came.
    package static func unreachable(_ error: SyncClientError, url: String) -> EnrollmentError {
        let code: String
        switch error {
        case .tlsFailure: code = "tls_failure"
        case .serverKeyNotPinned: code = "pin_mismatch"
        default: code = "unreachable"
        }
        return EnrollmentError(
            code: code, message: "cannot enroll with \(url): \(error)",
            hint: "check [server] url (and ca_file, pin_sha256 for wss://) and that the server is running; the agent tries again by itself",
            isTransient: error.isTransient)
    }

    /// An answer that is not the enrollment contract's: a proxy's page, a server without
    /// `/enroll` (404), a credential for another device.
    package static func unexpectedAnswer(_ detail: String, status: Int, retryAfter: Duration? = nil) -> EnrollmentError {
        let transient = isTransient(status: status)
        return EnrollmentError(
            code: "unexpected_answer", message: "the server's answer to the enrollment is not one tetherd reads: \(detail)",
            hint: status == 404
                ? "the server does not offer /enroll: upgrade it, or check [server] url (a proxy must pass /enroll to the devices' listener)"
                : transient ? "the agent tries again by itself" : "check [server] url and the server's release",
            isTransient: transient, httpStatus: status, retryAfter: retryAfter)
    }

    /// `[server] enrollment_key_file` cannot be used.
    package static func keyFile(_ problem: EnrollmentKeyFile.Problem) -> EnrollmentError {
        EnrollmentError(
            code: "key_file", message: "cannot read the enrollment key: \(problem)",
            hint: "fix [server] enrollment_key_file and reload (systemctl reload tetherd)", isTransient: false)
    }

    /// The credential came but could not be written to `token_file` (the next attempt enrolls again).
    package static func credentialNotWritten(_ path: String, reason: String) -> EnrollmentError {
        EnrollmentError(
            code: "credential_write", message: "enrolled, but cannot write the credential to \(path): \(reason)",
            hint: "token_file's directory must be writable by tetherd's user and have free space; the agent enrolls again by itself",
            isTransient: true)
    }

    /// The token file holds the credential of another device and no key lets this one enroll.
    package static func clonedCredential(tokenFile: String, issuedTo: String, device: String) -> EnrollmentError {
        EnrollmentError(
            code: "cloned_credential",
            message: "\(tokenFile) holds the credential of device \(issuedTo), but this machine is device \(device) (a clone of an enrolled image, or a copied state directory); it is not used",
            hint: "set [server] enrollment_key_file so that this device enrolls itself, or run tetherctl enroll; then reload",
            isTransient: false)
    }

    /// Rate limits, timeouts and the server's or a proxy's temporary failures.
    static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || (500...599).contains(status) }
}
