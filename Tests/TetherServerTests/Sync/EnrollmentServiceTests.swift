import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// ``EnrollmentService`` on a real SQLite storage: the request read as JSON, each refusal
/// counted for its peer until the peer must wait, an enrollment answered with the credential.
@Suite struct EnrollmentServiceTests {
    static let deviceID = SyncServiceDevicesTests.deviceID

    @Test func anEnrollmentAnswersTheDeviceItsNameTagsAndCredential() async throws {
        let fixture = try await SyncServiceDevicesTests.fixture()
        defer { fixture.dir.remove() }
        let body = try JSONEncoder().encode(EnrollmentRequest(key: fixture.key.text, deviceID: Self.deviceID, name: nil, release: "0.9.0"))
        guard case .enrolled(let response, let isNew) = await fixture.enrollment.enroll(body: Array(body), peer: "192.0.2.1") else {
            Issue.record("not enrolled")
            return
        }
        #expect(isNew && response.name == "device-01234567" && response.tags == ["store": "17"])
        let credential = try #require(DeviceCredential(parsing: response.credential))
        #expect(credential.deviceID == Self.deviceID)
        #expect(try await fixture.storage.device(id: Self.deviceID)?.credentialDigest == SecretDigest.of(credential.secret))
    }

    @Test func theRequestIsReadAsJSONAndRefusalsMakeAPeerWait() async throws {
        let fixture = try await SyncServiceDevicesTests.fixture()
        defer { fixture.dir.remove() }
        let start = ContinuousClock.now
        let malformed = await fixture.enrollment.enroll(body: Array("{\"key\": 1}".utf8), peer: "192.0.2.9", at: start)
        #expect(malformed.httpStatus == 400)
        for _ in 0..<5 {
            let wrong = await fixture.enrollment.enroll(
                EnrollmentRequest(key: "tek1.0000000000000000.\(CredentialMinter.newSecret())", deviceID: Self.deviceID, name: nil, release: "1"),
                peer: "192.0.2.9", at: start)
            #expect(wrong.httpStatus == 401)
        }
        guard case .throttled(let seconds) = fixture.enrollment.admit("192.0.2.9", at: start) else {
            Issue.record("the peer was not told to wait")
            return
        }
        #expect(seconds >= 1)
        #expect(fixture.enrollment.admit("192.0.2.10", at: start) == nil)
    }
}
