import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

/// ``CredentialMinter`` and ``SecretDigest``: secrets in the text forms the protocol parses,
/// 256 bits each, kept as SHA-256 digests compared in constant time.
@Suite struct CredentialMinterTests {
    @Test func credentialsParseBackAndTheirDigestIsTheSecrets() {
        let (credential, digest) = CredentialMinter.credential(for: "0123456789abcdef0123456789abcdef")
        #expect(DeviceCredential(parsing: credential.text) == credential)
        #expect(credential.secret.utf8.count == 43)
        #expect(digest == SecretDigest.of(credential.secret) && digest.count == 32)
    }

    @Test func enrollmentKeysParseBack() {
        let (key, digest) = CredentialMinter.enrollmentKey()
        #expect(EnrollmentKeyText(parsing: key.text) == key)
        #expect(key.keyID.utf8.count == 16 && digest == SecretDigest.of(key.secret))
    }

    @Test func secretsDoNotRepeat() {
        let secrets = Set((0..<200).map { _ in CredentialMinter.newSecret() })
        #expect(secrets.count == 200)
        #expect(secrets.allSatisfy { $0.utf8.count == 43 && !$0.contains("=") && !$0.contains("+") && !$0.contains("/") })
    }

    @Test func base64urlHasNoPadding() {
        #expect(CredentialMinter.base64url([0xfb, 0xff]) == "-_8")
        #expect(CredentialMinter.base64url(Array(repeating: 0, count: 32)).utf8.count == 43)
    }

    @Test func digestsCompareByEveryByte() {
        let a = SecretDigest.of("a")
        #expect(SecretDigest.equal(a, SecretDigest.of("a")))
        #expect(!SecretDigest.equal(a, SecretDigest.of("b")))
        #expect(!SecretDigest.equal(a, Array(a.dropLast())))
        let credential = DeviceCredential(deviceID: "d", secret: "s")
        #expect(SecretDigest.matches(credential, current: SecretDigest.of("s"), pending: []) == .current)
        let pending = [SecretDigest.of("y"), SecretDigest.of("s")]
        #expect(SecretDigest.matches(credential, current: SecretDigest.of("x"), pending: pending) == .pending(SecretDigest.of("s")))
        #expect(SecretDigest.matches(credential, current: SecretDigest.of("x"), pending: [SecretDigest.of("y")]) == .none)
        #expect(SecretDigest.matches(credential, current: SecretDigest.of("x"), pending: []) == .none)
    }
}
