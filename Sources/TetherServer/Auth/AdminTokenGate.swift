import Foundation
import Synchronization

/// The admin token's digest where code off the policy actor can read it at once: the
/// connection guard checks an `/admin` request head on the event loop, before any of its body
/// is read (``ConnectionGuardEvent/requestHead(authenticated:)``). ``ServerPolicy`` keeps it
/// current across reloads.
package final class AdminTokenGate: Sendable {
    private let digest: Mutex<TokenDigest>

    init(_ digest: TokenDigest) { self.digest = Mutex(digest) }

    func replace(_ new: TokenDigest) { digest.withLock { $0 = new } }

    /// Whether `authorization` (an HTTP `Authorization` value) is `Bearer <admin token>`.
    func accepts(authorization: String?) -> Bool {
        guard let value = authorization, value.hasPrefix("Bearer ") else { return false }
        let token = String(value.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
        let presented = TokenDigest(token: token)
        return digest.withLock { $0.constantTimeEquals(presented) }
    }
}
