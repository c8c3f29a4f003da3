import HTTPTypes
import Hummingbird

/// The routes of a signed-in console: without a live session a GET is sent to the sign-in
/// page and anything else refused (403, nothing done); a POST must also come from the
/// console's own site (``ConsoleHTTP/sameSite(_:)``) and carry the session's CSRF token in
/// its form, which this middleware reads (the body, collected, is passed on for the route
/// to decode).
struct ConsoleAccessMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    /// The one field every console form carries.
    struct CSRFField: Decodable { var csrf: String? }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let session = context.session else {
            return request.method == .get || request.method == .head ? ConsoleHTTP.redirect("/console/sign-in") : ConsoleHTTP.refused()
        }
        guard request.method == .post else { return try await next(request, context) }
        guard ConsoleHTTP.sameSite(request) else { return ConsoleHTTP.refused() }
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        let field = try? URLEncodedFormDecoder().decode(CSRFField.self, from: String(buffer: body))  // a form that does not parse has no token: refused below
        guard ConsoleSessions.csrfMatches(session, field?.csrf) else { return ConsoleHTTP.refused() }
        return try await next(request, context)
    }
}
