import Crypto

/// The SHA-256 of a token. Tokens are kept in memory only as digests and compared in
/// constant time; the token itself is never stored or logged.
package struct TokenDigest: Sendable, Hashable, CustomStringConvertible {
    let bytes: [UInt8]

    package init(token: String) {
        bytes = Array(SHA256.hash(data: Array(token.utf8)))
    }

    /// Compares every byte whatever the first difference.
    package func constantTimeEquals(_ other: TokenDigest) -> Bool {
        guard bytes.count == other.bytes.count else { return false }
        var difference: UInt8 = 0
        for i in bytes.indices { difference |= bytes[i] ^ other.bytes[i] }
        return difference == 0
    }

    package var description: String { "token digest" }
}
