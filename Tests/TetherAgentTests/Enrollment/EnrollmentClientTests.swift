import Foundation
import Testing
import TetherProtocol
import TetherSyncClient
import TetherTestSupport
@testable import TetherAgent

/// ``EnrollmentClient``: what each answer means (pure), and one exchange with the fake server.
@Suite struct EnrollmentClientTests {
    static let device = String(repeating: "c3", count: 16)
    static let request = EnrollmentRequest(key: "tek1.k", deviceID: device, name: nil, release: "0.0.0")
    static let credential = "tdc1.\(device).\(String(repeating: "s", count: 43))"

    static func body(_ value: some Encodable) -> [UInt8] { Array(try! JSONEncoder().encode(value)) }

    func interpret(_ status: Int, _ body: [UInt8], retryAfter: Int? = nil) -> Result<EnrollmentResponse, EnrollmentError> {
        EnrollmentClient.interpret(EnrollmentPost.Answer(status: status, body: body, retryAfterSeconds: retryAfter), for: Self.request)
    }

    @Test func aCreatedOrRepeatedEnrollmentIsTheResponse() throws {
        let response = EnrollmentResponse(deviceID: Self.device, name: "till-1", tags: ["store": "17"], credential: Self.credential)
        for status in [200, 201] {
            #expect(try interpret(status, Self.body(response)).get() == response)
        }
    }

    @Test func anAnswerForAnotherDeviceOrWithoutACredentialIsUnexpected() {
        let other = String(repeating: "d4", count: 16)
        for response in [
            EnrollmentResponse(deviceID: other, name: "till-1", tags: [:], credential: "tdc1.\(other).\(String(repeating: "s", count: 43))"),
            EnrollmentResponse(deviceID: Self.device, name: "till-1", tags: [:], credential: "tdc1.\(other).\(String(repeating: "s", count: 43))"),
            EnrollmentResponse(deviceID: Self.device, name: "till-1", tags: [:], credential: "a-users-token"),
            EnrollmentResponse(deviceID: Self.device, name: "bad name\u{1b}", tags: [:], credential: Self.credential),
        ] {
            guard case .failure(let error) = interpret(201, Self.body(response)) else { Issue.record("\(response.name)"); continue }
            #expect(error.code == "unexpected_answer" && !error.isTransient)
            #expect(!error.description.contains(String(repeating: "s", count: 43)), "the credential is never in an error")
        }
        guard case .failure(let error) = interpret(201, Array("not json".utf8)) else { Issue.record("not json"); return }
        #expect(error.code == "unexpected_answer")
    }

    @Test func everyContractCodeIsARefusalWithItsHintAndTransience() {
        for code in EnrollmentErrorCode.allCases {
            guard case .failure(let error) = interpret(code.httpStatus, Self.body(EnrollmentFailure(code, "no")), retryAfter: 7) else {
                Issue.record("\(code)")
                continue
            }
            #expect(error.code == code.rawValue && error.knownCode == code)
            #expect(error.isTransient == code.isTransient, "\(code)")
            #expect(error.hint == code.hint && error.httpStatus == code.httpStatus && error.retryAfter == .seconds(7))
        }
    }

    @Test func aNewerServersCodeIsKeptAndJudgedByItsStatus() {
        let body = Array(#"{"error":{"code":"quota_exceeded","message":"m\u001b[31m","hint":"h"}}"#.utf8)
        guard case .failure(let permanent) = interpret(403, body), case .failure(let transient) = interpret(503, body) else {
            Issue.record("not refusals")
            return
        }
        #expect(permanent.code == "quota_exceeded" && !permanent.isTransient && permanent.hint == "h")
        #expect(!permanent.message.contains("\u{1b}"), "the server's words are made printable")
        #expect(transient.isTransient)
    }

    @Test func anAnswerThatIsNotTheContractsIsJudgedByItsStatus() {
        for (status, transient) in [(404, false), (400, false), (502, true), (503, true), (429, true), (408, true)] {
            guard case .failure(let error) = interpret(status, Array("<html>".utf8)) else { Issue.record("\(status)"); continue }
            #expect(error.code == "unexpected_answer" && error.isTransient == transient && error.httpStatus == status, "\(status)")
        }
        guard case .failure(let notFound) = interpret(404, []) else { return }
        #expect(notFound.hint.contains("does not offer /enroll"))
    }

    @Test func oneExchangeWithTheFakeServer() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let key = server.addKey(tags: ["store": "17"])
        let client = try #require(EnrollmentClient(serverURL: server.syncURL, trust: ServerTrust()))
        #expect(client.url == "\(server.baseURL)/enroll")
        let request = EnrollmentRequest(key: key, deviceID: Self.device, name: "till-1", release: "0.0.0")
        let first = try await client.enroll(request)
        #expect(first.deviceID == Self.device && first.name == "till-1" && first.tags == ["store": "17"])
        let again = try await client.enroll(request)
        #expect(again.name == "till-1" && again.credential != first.credential, "the same device, a fresh credential")
        await #expect(throws: EnrollmentError.self) {
            try await client.enroll(EnrollmentRequest(key: "tek1.0000000000000000.\(String(repeating: "A", count: 43))", deviceID: Self.device, name: nil, release: "0"))
        }
        #expect(server.devices.count == 1)
    }

    @Test func nobodyListeningIsTransient() async throws {
        let refusing = try LoopbackPort.refusing()
        defer { refusing.close() }
        let client = try #require(EnrollmentClient(serverURL: refusing.syncURL, trust: ServerTrust()))
        do {
            _ = try await client.enroll(Self.request)
            Issue.record("enrolled with nobody")
        } catch {
            #expect(error.code == "unreachable" && error.isTransient && error.httpStatus == nil)
        }
    }
}
