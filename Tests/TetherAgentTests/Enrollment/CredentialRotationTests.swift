import Crypto
import Foundation
import Logging
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// ``CredentialRotation``: a credential the server hands over replaces the token file only when
/// that file holds a credential of the same device, and is acknowledged only once written.
@Suite struct CredentialRotationTests {
    static let device = "0123456789abcdef0123456789abcdef"
    static let old = DeviceCredential(deviceID: device, secret: String(repeating: "o", count: 43))
    static let new = DeviceCredential(deviceID: device, secret: String(repeating: "n", count: 43))
    static let log = Logger(label: "test")

    @Test func theNewCredentialIsWrittenThenItsDigestAcknowledged() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("token", Self.old.text + "\n")
        let outcome = await CredentialRotation.store(Self.new, tokenFile: path, log: Self.log)
        #expect(outcome == .written(digest: Array(SHA256.hash(data: Array(Self.new.secret.utf8)))))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.new.text + "\n")
        #expect(CredentialHistory.read(tokenFile: path, deviceID: Self.device) == [Self.old.text], "the replaced one is kept")
    }

    @Test func aCredentialForAnotherDeviceIsNotWritten() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("token", Self.old.text + "\n")
        let other = DeviceCredential(deviceID: "ffffffffffffffffffffffffffffffff", secret: Self.new.secret)
        #expect(await CredentialRotation.store(other, tokenFile: path, log: Self.log) == .notWritten)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.old.text + "\n")
    }

    @Test(arguments: ["a user's token\n", ""])
    func aTokenFileWithoutACredentialIsLeftAlone(content: String) async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("token", content)
        #expect(await CredentialRotation.store(Self.new, tokenFile: path, log: Self.log) == .notWritten)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == content)
    }
}
