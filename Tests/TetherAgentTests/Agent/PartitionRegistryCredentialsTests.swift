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

    /// A registry whose token file holds this device's credential `current`, and `earlier`
    /// its earlier ones (newest first); the credentials by letter.
    static func registry(
        _ dir: TemporaryDirectory, current: Character, earlier: [Character]
    ) throws -> (PartitionRegistry, device: String, credential: (Character) -> String) {
        let registry = try PartitionRegistryTests.registry(dir, partitions: ["p"])
        let device = try registry.stateDatabase.deviceID()
        let credential = { (letter: Character) in Self.credential(letter, device: device) }
        try CredentialWriter.write(credential(current), to: dir.appending("token"))
        try CredentialHistory.write(earlier.map(credential), tokenFile: dir.appending("token"))
        return (registry, device, credential)
    }

    static func tokenFile(_ dir: TemporaryDirectory) throws -> String {
        try String(contentsOfFile: dir.appending("token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anEarlierCredentialTheServerAcceptsIsTheTokenFilesAgain() async throws {
        try await withTemporaryDirectory { dir in
            let (registry, device, credential) = try Self.registry(dir, current: "n", earlier: ["o", "p"])
            let (old, older, new) = (credential("o"), credential("p"), credential("n"))

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
            let (registry, _, credential) = try Self.registry(dir, current: "n", earlier: ["o"])
            let (old, new) = (credential("o"), credential("n"))
            await registry.credentialRefused(new)
            await registry.credentialRefused(old)
            #expect(try await registry.readToken() == new)
            #expect(try Self.tokenFile(dir) == new, "unchanged")
        }
    }

    /// Every credential refused: the next attempt's check is told so once (it enrolls when a
    /// key is set); an acceptance of the token file's credential forgets it.
    @Test func aRefusalOfEveryCredentialIsTakenOnceByTheNextCheck() async throws {
        try await withTemporaryDirectory { dir in
            let (registry, _, credential) = try Self.registry(dir, current: "n", earlier: ["o"])
            let (old, new) = (credential("o"), credential("n"))
            #expect(await registry.takeCredentialRefusal() == false)
            await registry.credentialRefused(new)
            #expect(await registry.takeCredentialRefusal() == false, "an earlier one is still to be offered")
            await registry.credentialRefused(old)
            #expect(await registry.takeCredentialRefusal() == true)
            #expect(await registry.takeCredentialRefusal() == false, "taken once")
            await registry.credentialRefused(new)
            await registry.credentialRefused(old)
            await registry.credentialAccepted(new)
            #expect(await registry.takeCredentialRefusal() == false, "the server came to accept it")
            // Without earlier credentials, the first refusal is the whole list's.
            try CredentialHistory.write([], tokenFile: dir.appending("token"))
            await registry.credentialRefused(new)
            #expect(await registry.takeCredentialRefusal() == true)
            // A token file that changed meanwhile (enrolled, rotated) is not the one refused.
            await registry.credentialRefused(new)
            try CredentialWriter.write(credential("e"), to: dir.appending("token"))
            #expect(await registry.takeCredentialRefusal() == false)
        }
    }

    @Test func aRotationMeanwhileOffersTheNewCredential() async throws {
        try await withTemporaryDirectory { dir in
            let (registry, device, credential) = try Self.registry(dir, current: "n", earlier: ["o"])
            let (new, newer) = (credential("n"), credential("r"))
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
