import Crypto
import Foundation
import NIOSSL

/// A pinned server key: the SHA-256 of a certificate's SubjectPublicKeyInfo (DER), the form of
/// HPKP and of curl's `--pinnedpubkey sha256//…`. It names the key pair, so it survives a
/// certificate renewed with the same key, and no CA can issue a certificate that matches it.
///
/// ```sh
/// openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der \
///   | openssl dgst -sha256 -binary | base64
/// ```
package struct ServerKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    package let digest: [UInt8]

    /// A pin as configured: standard base64 of the 32-byte digest, optionally after curl's
    /// `sha256//`; nil when it is not one.
    package init?(base64 text: String) {
        let trimmed = text.hasPrefix("sha256//") ? String(text.dropFirst("sha256//".count)) : text
        guard let data = Data(base64Encoded: trimmed), data.count == SHA256.byteCount else { return nil }
        digest = Array(data)
    }

    /// The pin of a DER SubjectPublicKeyInfo.
    package init(subjectPublicKeyInfo der: [UInt8]) {
        digest = Array(SHA256.hash(data: der))
    }

    /// The pin of `certificate`'s public key.
    package init(of certificate: NIOSSLCertificate) throws {
        self.init(subjectPublicKeyInfo: try certificate.extractPublicKey().toSPKIBytes())
    }

    /// The base64 of the digest, as `pin_sha256` takes it.
    package var base64: String { Data(digest).base64EncodedString() }

    /// `sha256//<base64>`.
    package var description: String { "sha256//\(base64)" }
}
