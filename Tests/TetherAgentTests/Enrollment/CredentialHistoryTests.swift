import Foundation
import Glibc
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent

/// ``CredentialHistory``: the credentials a device held before, kept beside its token file —
/// only its own, newest first, each once, at most ``CredentialHistory/limit``, mode 0600.
@Suite struct CredentialHistoryTests {
    static let device = "0123456789abcdef0123456789abcdef"
    static let other = "ffffffffffffffffffffffffffffffff"

    static func credential(_ letter: Character, device: String = device) -> String {
        DeviceCredential(deviceID: device, secret: String(repeating: letter, count: 43)).text
    }

    @Test func theReplacedCredentialBecomesTheNewestEarlierOne() throws {
        let dir = try TemporaryDirectory()
        let token = try dir.write("token", Self.credential("a") + "\n")
        try CredentialHistory.remember(currentOf: token, deviceID: Self.device)
        try CredentialWriter.write(Self.credential("b"), to: token)
        try CredentialHistory.remember(currentOf: token, deviceID: Self.device)
        try CredentialWriter.write(Self.credential("c"), to: token)
        #expect(CredentialHistory.read(tokenFile: token, deviceID: Self.device) == [Self.credential("b"), Self.credential("a")])
        #expect(CredentialHistory.read(tokenFile: token, deviceID: Self.device, excluding: Self.credential("b")) == [Self.credential("a")])
        var info = stat()
        #expect(stat(CredentialHistory.path(forTokenFile: token), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    @Test func atMostTheLimitIsKeptAndEachOnce() throws {
        let dir = try TemporaryDirectory()
        let token = try dir.write("token", Self.credential("a") + "\n")
        let letters = Array("abcdefghijklmnop")
        for (index, letter) in letters.enumerated().dropFirst() {
            try CredentialHistory.remember(currentOf: token, deviceID: Self.device)
            try CredentialWriter.write(Self.credential(letter), to: token)
            // Remembering the same one again (a rotation handed twice) keeps it once.
            if index == 3 { try CredentialHistory.remember(currentOf: token, deviceID: Self.device) }
        }
        let kept = CredentialHistory.read(tokenFile: token, deviceID: Self.device)
        #expect(kept.count == CredentialHistory.limit)
        #expect(kept == letters.dropLast().reversed().prefix(CredentialHistory.limit).map { Self.credential($0) })
    }

    @Test func anotherDevicesCredentialsAreNeitherKeptNorOffered() throws {
        let dir = try TemporaryDirectory()
        // A golden image's files: the image's device's credential and its earlier one.
        let token = try dir.write("token", Self.credential("g", device: Self.other) + "\n")
        try dir.write("token.earlier", Self.credential("h", device: Self.other) + "\n" + Self.credential("a") + "\nnot a credential\n")
        #expect(CredentialHistory.read(tokenFile: token, deviceID: Self.device) == [Self.credential("a")])
        #expect(CredentialHistory.read(tokenFile: token, deviceID: Self.other) == [Self.credential("h", device: Self.other)])
        // The clone enrolls: the image's credentials leave the file.
        try CredentialHistory.remember(currentOf: token, deviceID: Self.device)
        let text = try String(contentsOfFile: dir.appending("token.earlier"), encoding: .utf8)
        #expect(text == Self.credential("a") + "\n")
    }

    @Test func nothingToKeepRemovesTheFile() throws {
        let dir = try TemporaryDirectory()
        let token = try dir.write("token", "a user's token\n")
        try dir.write("token.earlier", Self.credential("h", device: Self.other) + "\n")
        try CredentialHistory.remember(currentOf: token, deviceID: Self.device)
        #expect(!FileManager.default.fileExists(atPath: dir.appending("token.earlier")))
        try CredentialHistory.remember(currentOf: token, deviceID: Self.device)  // no file: still nothing
        #expect(CredentialHistory.read(tokenFile: token, deviceID: Self.device).isEmpty)
    }

    @Test func aSymbolicLinkIsNotRead() throws {
        let dir = try TemporaryDirectory()
        let token = try dir.write("token", Self.credential("b") + "\n")
        let elsewhere = try dir.write("elsewhere", Self.credential("a") + "\n")
        symlink(elsewhere, dir.appending("token.earlier"))
        #expect(CredentialHistory.read(tokenFile: token, deviceID: Self.device).isEmpty)
    }
}
