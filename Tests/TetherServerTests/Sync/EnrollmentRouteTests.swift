import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// `POST /enroll` over HTTP (HummingbirdTesting's router): the answers' statuses, bodies and
/// headers as the contract names them.
@Suite struct EnrollmentRouteTests {
    static func withRoute(_ body: @Sendable (SyncServiceDevicesTests.Fixture, any TestClientProtocol) async throws -> Void) async throws {
        let fixture = try await SyncServiceDevicesTests.fixture(uses: 1)
        defer { fixture.dir.remove() }
        let route = EnrollmentRoute(service: fixture.enrollment)
        let router = Router()
        router.post("enroll") { request, _ in await route.handle(request, peer: "192.0.2.1") }
        try await Application(router: router).test(.router) { client in try await body(fixture, client) }
    }

    static func json(_ request: EnrollmentRequest) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONEncoder().encode(request))
    }

    @Test func anEnrollmentIsAnswered201ThenA200ForTheSameDevice() async throws {
        try await Self.withRoute { fixture, client in
            let request = EnrollmentRequest(
                key: fixture.key.text, deviceID: SyncServiceDevicesTests.deviceID, name: "till-1", release: "0.9.0")
            try await client.execute(uri: "/enroll", method: .post, body: Self.json(request)) { response in
                #expect(response.status == .created)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                let answer = try JSONDecoder().decode(EnrollmentResponse.self, from: Data(response.body.readableBytesView))
                #expect(answer.name == "till-1" && answer.tags == ["store": "17"] && answer.deviceID == SyncServiceDevicesTests.deviceID)
                #expect(DeviceCredential(parsing: answer.credential)?.deviceID == SyncServiceDevicesTests.deviceID)
                let text = String(decoding: response.body.readableBytesView, as: UTF8.self)
                #expect(text.contains("\"device_id\"") && !text.contains(fixture.key.secret))
            }
            try await client.execute(uri: "/enroll", method: .post, body: Self.json(request)) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func refusalsCarryTheirCodeStatusAndHint() async throws {
        try await Self.withRoute { fixture, client in
            let request = EnrollmentRequest(
                key: "tek1.00000000000000ff.\(CredentialMinter.newSecret())", deviceID: SyncServiceDevicesTests.deviceID, name: nil,
                release: "0.9.0")
            try await client.execute(uri: "/enroll", method: .post, body: Self.json(request)) { response in
                #expect(response.status == .unauthorized)
                let failure = try JSONDecoder().decode(EnrollmentFailure.self, from: Data(response.body.readableBytesView))
                #expect(failure.error.code == .unknownKey && failure.error.hint == EnrollmentErrorCode.unknownKey.hint)
            }
            try await client.execute(uri: "/enroll", method: .post, body: ByteBuffer(string: "not json")) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test func aBodyOverTheLimitIsAnswered413() async throws {
        try await Self.withRoute { _, client in
            let big = ByteBuffer(repeating: UInt8(ascii: "x"), count: EnrollmentLimits.maxRequestBytes + 1)
            try await client.execute(uri: "/enroll", method: .post, body: big) { response in
                #expect(response.status == .contentTooLarge)
                let failure = try JSONDecoder().decode(EnrollmentFailure.self, from: Data(response.body.readableBytesView))
                #expect(failure.error.code == .tooLarge)
            }
        }
    }

    @Test func aPeerRefusedTooOftenIsAnswered429WithRetryAfter() async throws {
        try await Self.withRoute { _, client in
            for _ in 0..<SignInThrottle.freeFailures {
                try await client.execute(uri: "/enroll", method: .post, body: ByteBuffer(string: "{}")) { response in
                    #expect(response.status == .badRequest)
                }
            }
            // Past the free ones each refusal makes the peer wait twice as long (1 s, 2 s, 4 s, …):
            // the next request within that wait is answered 429. A test slowed down by a loaded
            // machine may miss the first waits; it meets one of the longer ones.
            var limited = false
            for _ in 0..<12 where !limited {
                try await client.execute(uri: "/enroll", method: .post, body: ByteBuffer(string: "{}")) { response in
                    guard response.status == .tooManyRequests else {
                        #expect(response.status == .badRequest)
                        return
                    }
                    limited = true
                    #expect(response.headers[.retryAfter].flatMap(Int.init).map { $0 >= 1 } == true)
                    let failure = try JSONDecoder().decode(EnrollmentFailure.self, from: Data(response.body.readableBytesView))
                    #expect(failure.error.code == .rateLimited)
                }
            }
            #expect(limited, "never answered 429")
        }
    }
}
