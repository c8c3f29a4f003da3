import Foundation
import Testing
import TetherAgent
import TetherProtocol
import TetherTOML
import TetherTestSupport

/// `[server] enrollment_key_file`: the key file's checks (``EnrollmentKeyFile``) and how the
/// configuration validates it with `token_file` (issue 48).
@Suite struct EnrollmentKeyFileTests {
    static let key = "tek1.0123456789abcdef." + String(repeating: "A", count: 42) + "Q"

    static func write(_ path: String, _ text: String, mode: mode_t) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
    }

    static func parse(_ dir: String, key: Bool = true) throws(ConfigError) -> AgentConfiguration {
        try AgentConfiguration.parse(
            text: """
                [server]
                url = "ws://127.0.0.1:7800/sync"
                token_file = "\(dir)/token"
                \(key ? "enrollment_key_file = \"\(dir)/enroll.key\"" : "")
                [[partition]]
                name = "a"
                """, file: "tetherd.toml")
    }

    static func problems(_ dir: String, key: Bool = true) -> [String] {
        do {
            _ = try parse(dir, key: key)
            return []
        } catch {
            return error.problems.map { "\($0)" }
        }
    }

    @Test func aPrivateKeyFileIsReadAndItsSurroundingWhiteSpaceIgnored() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        try Self.write("\(dir)/enroll.key", "  \(Self.key)\n", mode: 0o600)
        let key = try EnrollmentKeyFile.read("\(dir)/enroll.key")
        #expect(key.text == Self.key && key.keyID == "0123456789abcdef")
    }

    @Test func aLooseMissingOddOrGarbageKeyFileIsRefusedNamingTheFileNeverTheKey() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        let path = "\(dir)/enroll.key"
        #expect(throws: EnrollmentKeyFile.Problem.missing(path: path)) { try EnrollmentKeyFile.read(path) }
        try Self.write(path, Self.key, mode: 0o640)
        #expect(throws: EnrollmentKeyFile.Problem.tooOpen(path: path, mode: 0o640)) { try EnrollmentKeyFile.read(path) }
        chmod(path, 0o604)
        #expect(throws: EnrollmentKeyFile.Problem.tooOpen(path: path, mode: 0o604)) { try EnrollmentKeyFile.read(path) }
        let tooOpen = "\(EnrollmentKeyFile.Problem.tooOpen(path: path, mode: 0o604))"
        #expect(tooOpen.contains("mode 604") && tooOpen.contains("chmod 600 \(path)") && !tooOpen.contains(Self.key))
        for garbage in ["", "secret", "tek1.0123456789ABCDEF." + String(repeating: "A", count: 43), String(repeating: "x", count: 5_000)] {
            try Self.write(path, garbage, mode: 0o600)
            #expect(throws: EnrollmentKeyFile.Problem.malformed(path: path), "\(garbage.prefix(30))") { try EnrollmentKeyFile.read(path) }
        }
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(throws: EnrollmentKeyFile.Problem.notRegular(path: path)) { try EnrollmentKeyFile.read(path) }
    }

    @Test func withAKeyTheTokenFileMayBeMissingOrEmpty() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        try Self.write("\(dir)/enroll.key", Self.key, mode: 0o600)
        let config = try Self.parse(dir)
        #expect(config.server.enrollmentKeyFile == "\(dir)/enroll.key")
        try Self.write("\(dir)/token", "\n", mode: 0o600)
        #expect(Self.problems(dir).isEmpty)
        #expect(Self.problems(dir, key: false).isEmpty, "an empty token without a key fails at bind, as it always did")
        try FileManager.default.removeItem(atPath: "\(dir)/token")
        #expect(Self.problems(dir, key: false).contains { $0.contains("server.token_file: \(dir)/token: No such file or directory") })
    }

    @Test func aLooseOrGarbageKeyIsAConfigurationErrorNamingTheKey() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        try Self.write("\(dir)/enroll.key", Self.key, mode: 0o644)
        #expect(Self.problems(dir) == [
            "tetherd.toml:4: server.enrollment_key_file: \(dir)/enroll.key is readable by group or others (mode 644): an enrollment key must be private, as an SSH private key is; run chmod 600 \(dir)/enroll.key"
        ])
        try Self.write("\(dir)/enroll.key", "not a key", mode: 0o600)
        #expect(Self.problems(dir).first?.contains("does not hold an enrollment key") == true)
    }

    @Test func aMissingKeyIsAProblemOnlyWhileTheTokenIsNeeded() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        #expect(Self.problems(dir).first?.contains("server.enrollment_key_file: \(dir)/enroll.key does not exist") == true)
        try Self.write("\(dir)/token", "some-token\n", mode: 0o600)
        #expect(Self.problems(dir).isEmpty, "a one-off key removed once the device enrolled")
        chmod("\(dir)/token", 0o640)
        #expect(Self.problems(dir).first?.contains("server.token_file: \(dir)/token is readable by group or others") == true)
    }

    @Test func theTokenFilesDirectoryMustBeWritableForEnrollment() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        try FileManager.default.createDirectory(atPath: "\(dir)/ro", withIntermediateDirectories: false)
        try Self.write("\(dir)/ro/enroll.key", Self.key, mode: 0o600)
        chmod("\(dir)/ro", 0o500)
        defer { chmod("\(dir)/ro", 0o700) }
        guard geteuid() != 0 else { return }  // root writes anywhere
        let found = Self.problems("\(dir)/ro")
        #expect(found.contains { $0.contains("server.token_file: enrollment writes the credential to \(dir)/ro/token, but its directory \(dir)/ro is not writable") }, "\(found)")
    }

    @Test func theKeyAndTheCredentialAreTwoFiles() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        let found: [String]
        do {
            _ = try AgentConfiguration.parse(
                text: "[server]\nurl = \"ws://h/sync\"\ntoken_file = \"\(dir)/t\"\nenrollment_key_file = \"\(dir)/t\"\n[[partition]]\nname = \"a\"\n",
                file: "t.toml")
            found = []
        } catch {
            found = error.problems.map { "\($0)" }
        }
        #expect(found.contains { $0.contains("server.enrollment_key_file: \(dir)/t is also token_file") })
    }
}
