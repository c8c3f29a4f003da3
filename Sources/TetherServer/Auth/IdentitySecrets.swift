import Foundation
import TetherProtocol

/// Mints the secrets enrollment deals in (docs/server.md "Enrollment"): an enrollment key
/// `tek1.<16 hex>.<secret>` and a device credential `tdc1.<device id>.<secret>`, each secret
/// 32 bytes from the system's cryptographic random source (`SystemRandomNumberGenerator`) as
/// 43 characters of base64url without padding. The server keeps only ``digest(_:)`` of a
/// secret (SHA-256 of its text, as ``TokenDigest``), compared in constant time; the secret is
/// shown once and never logged.
package enum IdentitySecrets {
    /// 256 random bits as base64url without padding.
    package static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A new enrollment key: 64 random bits of id (16 lower-case hex digits) and a secret.
    package static func newEnrollmentKey() -> EnrollmentKeyText {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<8).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        return EnrollmentKeyText(keyID: id, secret: newSecret())
    }

    /// A new credential for the device `deviceID`.
    package static func newCredential(deviceID: String) -> DeviceCredential {
        DeviceCredential(deviceID: deviceID, secret: newSecret())
    }

    /// What the storage keeps of a secret: the SHA-256 of its text.
    package static func digest(_ secret: String) -> [UInt8] { TokenDigest(token: secret).bytes }
}
