import Foundation
import TetherProtocol

/// Makes the secrets enrollment deals in: 32 bytes from the system's cryptographic random
/// source (`SystemRandomNumberGenerator`, `getrandom(2)`), written as 43 characters of base64url
/// without padding, each returned with the SHA-256 digest the server keeps (``SecretDigest``).
/// The secrets themselves are never stored or logged.
package enum CredentialMinter {
    /// A new device credential for `deviceID`.
    package static func credential(for deviceID: String) -> (credential: DeviceCredential, digest: [UInt8]) {
        let secret = newSecret()
        return (DeviceCredential(deviceID: deviceID, secret: secret), SecretDigest.of(secret))
    }

    /// A new enrollment key: a random 16-hex-digit id and a secret.
    package static func enrollmentKey() -> (key: EnrollmentKeyText, digest: [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<8).map { _ in hex(UInt8.random(in: .min ... .max, using: &generator)) }.joined()
        let secret = newSecret()
        return (EnrollmentKeyText(keyID: id, secret: secret), SecretDigest.of(secret))
    }

    /// 256 random bits as base64url without padding.
    package static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return base64url(bytes)
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
    }
}
