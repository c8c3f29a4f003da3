import Foundation
import Testing
import TetherTestSupport
@testable import TetherAgent

/// ``CredentialWriter``: the credential replaces the token file whole, mode 0600, with no temp
/// file left; a failed write leaves the old file as it was.
@Suite struct CredentialWriterTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }

    static func entries(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()  // a test's own directory: listable
    }

    @Test func aNewFileIsWrittenWholeWithMode600() throws {
        let dir = try TemporaryDirectory()
        let path = dir.appending("token")
        try CredentialWriter.write("tdc1.abc.secret", to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "tdc1.abc.secret\n")
        #expect(Self.mode(path) == 0o600)
        #expect(Self.entries(dir.path) == ["token"], "no temp file left")
    }

    @Test func anExistingFileIsReplacedAndKeepsItsOwner() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("token", "old\n")
        chmod(path, 0o644)
        let before = try #require(CredentialWriter.Owner.of(path))
        try CredentialWriter.write("new", to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new\n")
        #expect(Self.mode(path) == 0o600, "the credential is private even where the old token was not")
        #expect(CredentialWriter.Owner.of(path) == before)
    }

    @Test func aCrashsLeftoverTempFileIsRemovedOthersAreNot() throws {
        let dir = try TemporaryDirectory()
        try dir.write(".token.tmp-dead", "half")
        try dir.write(".other.tmp-dead", "not ours")
        try CredentialWriter.write("new", to: dir.appending("token"))
        #expect(Self.entries(dir.path) == [".other.tmp-dead", "token"])
    }

    @Test func aFailedWriteLeavesTheOldFileAndNoTempFile() throws {
        guard geteuid() != 0 else { return }  // root writes into a read-only directory
        let dir = try TemporaryDirectory()
        let path = try dir.write("token", "old\n")
        chmod(dir.path, 0o500)
        defer { chmod(dir.path, 0o700) }
        #expect(throws: CredentialWriter.Failure.self) { try CredentialWriter.write("new", to: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
        #expect(Self.entries(dir.path) == ["token"])
    }
}
