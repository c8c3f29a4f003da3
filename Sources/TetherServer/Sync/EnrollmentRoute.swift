import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TetherProtocol

/// `POST /enroll` on the devices' listener (docs/server.md "Enrollment"). Unauthenticated, so
/// under the listener's `[limits]` like any request before a bind (``ConnectionGuard``,
/// ``HTTPPhaseWatcher``); a throttled peer is answered 429 with `Retry-After` before its body
/// is read, a body over ``EnrollmentLimits/maxRequestBytes`` 413 `too_large`. The answer is an
/// ``EnrollmentResponse`` (201, or 200 for a re-enrollment) or an ``EnrollmentFailure`` with its
/// code's status.
package struct EnrollmentRoute: Sendable {

    let service: EnrollmentService

    package init(service: EnrollmentService) {
        self.service = service
    }

    /// Answers one request from `peer` (the client a trusted proxy named, else the socket's peer).
    package func handle(_ request: Request, peer: String) async -> Response {
        if let throttled = service.admit(peer) { return Self.response(throttled) }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > EnrollmentLimits.maxRequestBytes {
            return Self.response(.refused(Self.tooLarge))
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: EnrollmentLimits.maxRequestBytes)
        } catch is NIOTooManyBytesError {
            return Self.response(.refused(Self.tooLarge))
        } catch {
            return Self.response(.refused(EnrollmentFailure(.malformed, "the request's body could not be read")))
        }
        return Self.response(await service.enroll(body: Array(body.readableBytesView), peer: peer))
    }

    static let tooLarge = EnrollmentFailure(.tooLarge, "the request is larger than \(EnrollmentLimits.maxRequestBytes) bytes")

    static func response(_ outcome: EnrollmentService.Outcome) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data?
        switch outcome {
        case .enrolled(let response, _):
            data = try? encoder.encode(response)  // plain strings: always encodes
        case .refused(let failure):
            data = try? encoder.encode(failure)  // plain strings: always encodes
        case .throttled(let seconds):
            headers[.retryAfter] = "\(seconds)"
            data = try? encoder.encode(  // plain strings: always encodes
                EnrollmentFailure(.rateLimited, "too many refused enrollment requests from this address; try again in \(seconds) s"))
        }
        return Response(
            status: HTTPResponse.Status(code: outcome.httpStatus), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data ?? Data())))
    }
}
