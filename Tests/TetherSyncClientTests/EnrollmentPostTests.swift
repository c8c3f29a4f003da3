import Foundation
import Testing
import TetherTestSupport
@testable import TetherSyncClient

/// ``EnrollmentPost``: where it posts, and what it does with an answer, none, or a slow one.
@Suite struct EnrollmentPostTests {
    @Test func theEnrollURLOfASyncURL() {
        let cases: [(String, String?)] = [
            ("ws://127.0.0.1:7800/sync", "http://127.0.0.1:7800/enroll"),
            ("wss://sync.example.net/sync", "https://sync.example.net/enroll"),
            ("wss://proxy.example.net/tether/sync/", "https://proxy.example.net/tether/enroll"),
            ("ws://h:1", "http://h:1/enroll"),
            ("https://sync.example.net", "https://sync.example.net/enroll"),
            ("http://[::1]:7800/sync?x=1", "http://[::1]:7800/enroll"),
            ("ftp://h/sync", nil),
            ("not a url", nil),
        ]
        for (server, expected) in cases {
            #expect(EnrollmentPost.enrollURL(forServer: server) == expected, "\(server)")
        }
    }

    @Test func anAnswerOfAnyStatusComesBackWithItsRetryAfter() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        server.script([.init(status: 429, body: "{}", headers: ["Retry-After": "12"])])
        let post = EnrollmentPost(url: server.baseURL + "/enroll", trust: ServerTrust(), software: "test")
        let answer = try await post.send(Array("{}".utf8))
        #expect(answer.status == 429 && answer.retryAfterSeconds == 12 && answer.body == Array("{}".utf8))
        let notFound = try await EnrollmentPost(url: server.baseURL + "/elsewhere", trust: ServerTrust(), software: "test").send([])
        #expect(notFound.status == 404)
    }

    @Test func aServerThatNeverAnswersFailsAtTheDeadline() async throws {
        let silent = try FakeSyncServer(.init(bytes: { [] }, closeAfter: false, upgrade: .silence))
        defer { silent.stop() }
        var slow = EnrollmentPost(url: "http://127.0.0.1:\(silent.port)/enroll", trust: ServerTrust(), software: "test")
        slow.deadline = .milliseconds(300)
        let post = slow
        do {
            _ = try await post.send(Array("{}".utf8))
            Issue.record("an answer from a silent server")
        } catch {
            guard case .unreachable(let reason, let cause) = error else { Issue.record("\(error)"); return }
            #expect(cause == .timedOut && reason.contains("no complete answer within"), "\(reason)")
        }
    }
}
