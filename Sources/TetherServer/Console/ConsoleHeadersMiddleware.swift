import HTTPTypes
import Hummingbird

/// Adds the headers every console answer carries (``ConsoleHTTP/securityHeaders``: no script,
/// no framing, no caching, no referrer to other sites; inline SVG is markup, not a script or
/// an image load, so the policy allows the charts) to every answer of the console's routes.
struct ConsoleHeadersMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        for field in ConsoleHTTP.securityHeaders where response.headers[field.name] == nil {
            response.headers.append(field)
        }
        return response
    }
}
