import Testing
import TetherProtocol
@testable import TetherServer

/// The secrets enrollment mints: forms the protocol parses, 256 bits each, never repeated,
/// kept as the SHA-256 of their text.
@Suite struct IdentitySecretsTests {
    @Test func keysAndCredentialsHaveTheirForms() throws {
        let key = IdentitySecrets.newEnrollmentKey()
        #expect(EnrollmentKeyText(parsing: key.text) == key)
        #expect(key.keyID.count == 16 && key.secret.count == 43)
        let id = String(repeating: "ab", count: 16)
        let credential = IdentitySecrets.newCredential(deviceID: id)
        #expect(DeviceCredential(parsing: credential.text) == credential && credential.deviceID == id)
    }

    @Test func secretsDoNotRepeatAndAreKeptAsTheirDigest() {
        let secrets = Set((0..<1000).map { _ in IdentitySecrets.newSecret() })
        #expect(secrets.count == 1000 && secrets.allSatisfy { $0.count == 43 && !$0.contains("=") && !$0.contains("+") && !$0.contains("/") })
        let ids = Set((0..<1000).map { _ in IdentitySecrets.newEnrollmentKey().keyID })
        #expect(ids.count == 1000)
        let secret = IdentitySecrets.newSecret()
        #expect(IdentitySecrets.digest(secret) == TokenDigest(token: secret).bytes && IdentitySecrets.digest(secret).count == 32)
    }
}
