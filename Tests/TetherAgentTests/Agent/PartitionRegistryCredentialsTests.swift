import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// The registry's token for binds (``PartitionRegistry/readToken()``) while the server refuses
/// the token file's credential: an earlier one of this device is offered, and the one accepted
/// becomes the token file's again, the refused one kept (docs/server.md "A server database put
/// back from an older backup").
@Suite struct PartitionRegistryCredentialsTests {
    static func credential(_ letter: Character, device: String) -> String {
        DeviceCredential(deviceID: device, secret: String(repeating: letter, count: 43)).text
    }

    static func tokenFile(_ dir: TemporaryDirectory) throws -> String {
        try String(contentsOfFile: dir.appending("token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anEarlierCredentialTheServerAcceptsIsTheTokenFilesAgain() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try PartitionRegistryTests.registry(dir, partitions: ["p"])
            let device = try registry.stateDatabase.deviceID()
            let (old, older, new) = (Self.credential("o", device: device), Self.credential("p", device: device), Self.credential("n", device: device))
            try CredentialWriter.write(new, to: dir.appending("token"))
            try CredentialHistory.write([old, older], tokenFile: dir.appending("token"))

            #expect(try await registry.readToken() == new)
            await registry.credentialRefused(new)
            await registry.credentialRefused(new)  // a second partition's bind: the same walk
            #expect(try await registry.readToken() == old, "the newest earlier one")
            await registry.credentialRefused(old)
            #expect(try await registry.readToken() == older)
            await registry.credentialAccepted(older)
            #expect(try Self.tokenFile(dir) == older, "written back")
            #expect(CredentialHistory.read(tokenFile: dir.appending("token"), deviceID: device) == [new, old], "the refused one kept first")
            #expect(try await registry.readToken() == older)
        }
    }

    @Test func everyCredentialRefusedBringsTheTokenFilesBack() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try PartitionRegistryTests.registry(dir, partitions: ["p"])
            let device = try registry.stateDatabase.deviceID()
            let (old, new) = (Self.credential("o", device: device), Self.credential("n", device: device))
            try CredentialWriter.write(new, to: dir.appending("token"))
            try CredentialHistory.write([old], tokenFile: dir.appending("token"))
            await registry.credentialRefused(new)
            await registry.credentialRefused(old)
            #expect(try await registry.readToken() == new)
            #expect(try Self.tokenFile(dir) == new, "unchanged")
        }
    }

    @Test func aRotationMeanwhileOffersTheNewCredential() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try PartitionRegistryTests.registry(dir, partitions: ["p"])
            let device = try registry.stateDatabase.deviceID()
            let (old, new, newer) = (Self.credential("o", device: device), Self.credential("n", device: device), Self.credential("r", device: device))
            try CredentialWriter.write(new, to: dir.appending("token"))
            try CredentialHistory.write([old], tokenFile: dir.appending("token"))
            await registry.credentialRefused(new)
            try CredentialHistory.remember(currentOf: dir.appending("token"), deviceID: device)
            try CredentialWriter.write(newer, to: dir.appending("token"))
            #expect(try await registry.readToken() == newer)
        }
    }

    @Test func aClonesFileOfAnotherDeviceIsNeverOffered() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try PartitionRegistryTests.registry(dir, partitions: ["p"])
            let device = try registry.stateDatabase.deviceID()
            let image = "ffffffffffffffffffffffffffffffff"
            let mine = Self.credential("n", device: device)
            try CredentialWriter.write(mine, to: dir.appending("token"))
            try CredentialWriter.write(Self.credential("g", device: image), to: dir.appending("token.earlier"))
            await registry.credentialRefused(mine)
            #expect(try await registry.readToken() == mine)
        }
    }

    @Test func aUsersTokenHasNoEarlierOnes() async throws {
        try await withTemporaryDirectory { dir in
            let registry = try PartitionRegistryTests.registry(dir, partitions: ["p"])
            await registry.credentialRefused("t0ken")
            #expect(try await registry.readToken() == "t0ken")
        }
    }
}
