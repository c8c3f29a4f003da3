import Crypto
import TetherProtocol

/// The SHA-256 of an enrollment secret (a device credential's, an enrollment key's), the only
/// form the server keeps, and the constant-time comparison every check of one uses.
package enum SecretDigest {
    package static func of(_ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(secret.utf8)))
    }

    /// Compares every byte whatever the first difference (lengths differ: false at once, a
    /// digest's length is no secret).
    package static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// Whether `credential`'s secret is the current one or one of the pending ones, compared in
    /// constant time against each whatever the others gave.
    package static func matches(_ credential: DeviceCredential, current: [UInt8], pending: [[UInt8]]) -> CredentialMatch {
        let presented = of(credential.secret)
        let isCurrent = equal(presented, current)
        var matchedPending: [UInt8]?
        for digest in pending where equal(presented, digest) { matchedPending = digest }
        if isCurrent { return .current }
        if let matchedPending { return .pending(matchedPending) }
        return .none
    }

    package enum CredentialMatch: Sendable, Hashable {
        case current
        /// One of the pending credentials (its digest).
        case pending([UInt8])
        case none
    }
}
