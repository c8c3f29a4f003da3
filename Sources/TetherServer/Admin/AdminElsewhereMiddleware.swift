import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// On the devices' listener (`listen`): `/admin…` and `/console…` are answered 404 with a
/// short body saying where they are served (JSON for `/admin`, as the admin API's other
/// errors; text for `/console`) and the header `Tether-Listener: devices`, by which the admin
/// client recognises a URL naming the wrong listener. The configured `admin_listen` address
/// is not disclosed: this listener faces the devices' network.
struct AdminElsewhereMiddleware<Context: RequestContext>: RouterMiddleware {
    static var message: String {
        "the admin API and console are served on admin_listen (HOST:PORT in tether-server.toml, default \(ServerConfiguration.defaultAdminListen)), not on the devices' listener; docs/server.md"
    }
    static var hint: String { "pass --url with the address of admin_listen" }
    static var listenerHeader: HTTPField.Name { HTTPField.Name("Tether-Listener")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if Self.isUnder("/admin", path) {
            let body = try JSONEncoder().encode(AdminAPI.Failure(error: Self.message, hint: Self.hint))
            return Response(
                status: .notFound, headers: [.contentType: "application/json; charset=utf-8", Self.listenerHeader: "devices"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        if Self.isUnder("/console", path) {
            return Response(
                status: .notFound, headers: [.contentType: "text/plain; charset=utf-8", Self.listenerHeader: "devices"],
                body: .init(byteBuffer: ByteBuffer(string: Self.message + "\n")))
        }
        return try await next(request, context)
    }

    static func isUnder(_ prefix: String, _ path: String) -> Bool {
        path == prefix || path.hasPrefix(prefix + "/")
    }
}
