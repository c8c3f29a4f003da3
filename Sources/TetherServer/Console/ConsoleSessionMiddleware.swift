import Hummingbird

/// Resolves the console's session cookie (``ConsoleSessions/cookieName``, read with
/// Hummingbird's `Cookies`) into ``ConsoleRequestContext/session`` for every console route;
/// an unknown or expired session leaves it nil. It refuses nothing: ``ConsoleAccessMiddleware``
/// does, for the routes that need a session.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext
    let sessions: ConsoleSessions

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let id = request.cookies[ConsoleSessions.cookieName]?.value, let session = sessions.session(id) {
            context.session = session
            context.sessionID = id
        }
        return try await next(request, context)
    }
}
