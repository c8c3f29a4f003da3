import Foundation
import Testing
import TetherTestSupport

/// Configuration files with each kind of error, given to the real programs (issue 9, bad
/// inputs): `tetherd --check-config`, `tetherd --config`, `tether-server --check-config` and
/// `tether-server --config` exit 2 with one line on stderr naming the file, the key and its line.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ConfigErrorEndToEndTests {
    /// One broken configuration: how to break a valid file, and what the line must name.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// Edits the valid file's text (and may change files beside it, in `dir`).
        var edit: @Sendable (_ text: String, _ dir: String) throws -> String
        /// The key the line names (nil for a syntax error, which names a line only).
        var key: String?
        /// The line the key is on in the edited file, found by this prefix (nil: no line).
        var linePrefix: String?
        /// Words the message must contain.
        var words: [String]
        var testDescription: String { name }
    }

    static func replacing(_ old: String, _ new: String) -> @Sendable (String, String) throws -> String {
        { text, _ in
            guard text.contains(old) else { throw TestSupportError("\(old) is not in the configuration") }
            return text.replacingOccurrences(of: old, with: new)
        }
    }

    static let agentCases: [Case] = [
        Case(name: "syntax", edit: { text, _ in "log_level = \"info\n" + text }, key: nil, linePrefix: "log_level = \"info", words: ["syntax"]),
        Case(name: "unknown key", edit: { text, _ in "colour = \"blue\"\n" + text }, key: "colour", linePrefix: "colour", words: ["unknown key"]),
        Case(name: "wrong type", edit: replacing("log_level = \"debug\"", "log_level = 3"), key: "log_level", linePrefix: "log_level", words: []),
        Case(name: "missing required key", edit: replacing("url = ", "# url = "), key: "server.url", linePrefix: "[server]", words: []),
        Case(
            name: "relative path", edit: replacing("state_dir = \"/", "state_dir = \"relative/"), key: "state_dir", linePrefix: "state_dir",
            words: ["absolute"]),
        Case(
            name: "missing token file", edit: replacing("/token\"", "/no-such-token\""), key: "server.token_file", linePrefix: "token_file",
            words: ["No such file"]),
        Case(
            name: "group-readable token file", edit: { text, dir in chmod(dir + "/token", 0o644); return text }, key: "server.token_file",
            linePrefix: "token_file", words: ["readable by group or others", "chmod 600"]),
        Case(
            name: "world-writable hook",
            edit: { text, dir in
                try Cluster.write("#!/bin/sh\nexit 0\n", to: dir + "/hooks/before", mode: 0o777)
                return text.replacingOccurrences(of: "[server]", with: "[reset]\nbefore_hook = \"\(dir)/hooks/before\"\n[server]")
            }, key: "reset.before_hook", linePrefix: "before_hook", words: ["writable by group or others"]),
    ]

    static let serverCases: [Case] = [
        Case(name: "syntax", edit: { text, _ in "oops = \"unterminated\n" + text }, key: nil, linePrefix: "oops", words: ["syntax"]),
        Case(name: "unknown key", edit: { text, _ in "typo = 1\n" + text }, key: "typo", linePrefix: "typo", words: ["unknown key"]),
        Case(
            name: "wrong type", edit: replacing("client_recovery = true", "client_recovery = \"yes\""), key: "client_recovery",
            linePrefix: "client_recovery", words: []),
        Case(
            name: "missing required key", edit: { text, _ in text.split(separator: "\n").filter { !$0.hasPrefix("admin_token_file") }.joined(separator: "\n") },
            key: "admin_token_file", linePrefix: nil, words: []),
        Case(
            name: "relative path", edit: replacing("data_dir = \"/", "data_dir = \"relative/"), key: "data_dir", linePrefix: "data_dir",
            words: ["absolute"]),
        Case(
            name: "missing token file", edit: replacing("/admin.token\"", "/no-such.token\""), key: "admin_token_file",
            linePrefix: "admin_token_file", words: ["no-such.token"]),
        Case(
            name: "group-readable admin token", edit: { text, dir in chmod(dir + "/admin.token", 0o644); return text },
            key: "admin_token_file", linePrefix: "admin_token_file", words: ["readable by group or others", "chmod 600"]),
        Case(
            name: "world-readable user token", edit: { text, dir in chmod(dir + "/device.token", 0o604); return text },
            key: "user[0].token_file", linePrefix: "token_file", words: ["readable by group or others"]),
    ]

    /// Runs `program arguments`, expecting exit 2 and exactly one stderr line that names the
    /// file, the key and its line.
    static func expectOneLine(_ program: String, _ arguments: [String], file: String, text: String, _ problem: Case) async throws {
        let result = try await ChildProcess.run(try BuiltProducts.executable(program), arguments, timeout: .seconds(60))
        #expect(result.status == 2 && !result.signalled, "\(program) \(arguments): \(result)")
        let lines = result.standardError.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(lines.count == 1, "\(program) \(arguments): one line, got \(lines)")
        let line = lines.first ?? ""
        #expect(line.contains(file), "names the file: \(line)")
        if let key = problem.key { #expect(line.contains(": \(key): ") || line.contains(" \(key)"), "names \(key): \(line)") }
        if let prefix = problem.linePrefix {
            let number = try #require(text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix(prefix) }) + 1
            #expect(line.contains("\(file):\(number):"), "names line \(number): \(line)")
        }
        for word in problem.words { #expect(line.contains(word), "says \(word): \(line)") }
        #expect(result.standardOutput.isEmpty, "nothing on stdout: \(result.standardOutput)")
    }

    @Test(arguments: agentCases)
    func tetherdRefusesEachKindOfConfigurationError(problem: Case) async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let text = try problem.edit(try String(contentsOfFile: a.configPath, encoding: .utf8), a.dir)
            try Cluster.write(text, to: a.configPath)
            try await Self.expectOneLine("tetherd", ["--check-config", "--config", a.configPath], file: a.configPath, text: text, problem)
            try await Self.expectOneLine(
                "tetherd", ["--config", a.configPath, "--log-destination", "stderr"], file: a.configPath, text: text, problem)
            #expect(!FileManager.default.fileExists(atPath: a.socket), "nothing was started")
        }
    }

    @Test(arguments: serverCases)
    func tetherServerRefusesEachKindOfConfigurationError(problem: Case) async throws {
        try await withCluster { cluster in
            let config = cluster.dir.appending("server.toml")
            let broken = cluster.dir.appending("broken.toml")
            let text = try problem.edit(try String(contentsOfFile: config, encoding: .utf8), cluster.dir.path)
            try Cluster.write(text, to: broken)
            try await Self.expectOneLine("tether-server", ["--check-config", "--config", broken], file: broken, text: text, problem)
            try await Self.expectOneLine("tether-server", ["--config", broken], file: broken, text: text, problem)
        }
    }

    /// A token that would cross the network in clear is said so (and the configuration is
    /// still valid: an operator may trust the network). Nothing connects here.
    @Test func aCleartextServerURLIsWarnedAbout() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"], url: "ws://sync.example.com:7800/sync")
            let result = try await ChildProcess.run(try BuiltProducts.executable("tetherd"), ["--check-config", "--config", a.configPath])
            #expect(result.status == 0, "\(result)")
            #expect(result.standardError.contains("warning: the token goes in clear to sync.example.com"), "\(result)")
            let local = try cluster.agent("b", partitions: ["p"])
            let quiet = try await ChildProcess.run(try BuiltProducts.executable("tetherd"), ["--check-config", "--config", local.configPath])
            #expect(quiet.status == 0 && !quiet.standardError.contains("in clear"), "\(quiet)")
        }
    }
}
