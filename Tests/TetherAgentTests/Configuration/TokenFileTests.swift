import Foundation
import Testing
import TetherAgent
import TetherTestSupport

/// What ``TokenFile`` makes of `token_file` for the decision to enroll (issue 48).
@Suite struct TokenFileTests {
    @Test func missingEmptyCredentialTokenOrUnreadable() throws {
        let directory = try TemporaryDirectory()
        let dir = directory.path
        let path = "\(dir)/token"
        #expect(TokenFile.inspect(path) == .missing)
        for empty in ["", "\n", "  \t\n"] {
            try empty.write(toFile: path, atomically: false, encoding: .utf8)
            #expect(TokenFile.inspect(path) == .empty)
            #expect(TokenFile.inspect(path).isMissingOrEmpty)
        }
        let device = String(repeating: "ab", count: 16)
        try "tdc1.\(device).\(String(repeating: "x", count: 43))\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(TokenFile.inspect(path) == .credential(deviceID: device))
        try "a-users-token\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(TokenFile.inspect(path) == .token)
        #expect(!TokenFile.inspect(path).isMissingOrEmpty)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        guard case .unreadable = TokenFile.inspect(path) else { Issue.record("a directory: \(TokenFile.inspect(path))"); return }
    }
}
