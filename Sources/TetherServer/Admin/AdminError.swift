import Foundation
import HTTPTypes
import Hummingbird

/// An admin request that failed, rendered as ``AdminAPI/Failure`` JSON.
package struct AdminError: HTTPResponseError, CustomStringConvertible {
    package var status: HTTPResponse.Status
    package var message: String
    package var hint: String?
    /// A body to send instead of the plain failure (a refused breaking schema shows its diff).
    var body: Data?

    package init(_ status: HTTPResponse.Status, _ message: String, hint: String? = nil) {
        self.status = status
        self.message = message
        self.hint = hint
    }

    package var description: String { message }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try body ?? JSONEncoder().encode(AdminAPI.Failure(error: message, hint: hint))
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func unknownPartition(_ name: String) -> AdminError {
        AdminError(.notFound, "partition \(name.debugDescription) is not known to the server", hint: "`tether-server admin status` lists the partitions")
    }

    static func illegalPartition(_ name: String) -> AdminError {
        AdminError(.badRequest, "\(name.debugDescription) is not a legal partition name")
    }
}
