import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web console's HTTP plumbing: its same-site check, its session cookie (Hummingbird's
/// `Cookie`), its answers, and the headers every console answer carries
/// (``ConsoleHeadersMiddleware`` adds them).
enum ConsoleHTTP {
    /// Not from another site: `Origin`, when sent, names this host; `Sec-Fetch-Site` is not `cross-site`.
    static func sameSite(_ request: Request) -> Bool {
        if request.headers[values: HTTPField.Name("Sec-Fetch-Site")!].contains("cross-site") { return false }
        guard let origin = request.headers[values: HTTPField.Name("Origin")!].first else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// The session cookie: `HttpOnly`, `SameSite=Strict`, `Path=/console`, `Secure` when the
    /// listener speaks TLS; an empty value with `Max-Age=0` ends it.
    static func sessionCookie(_ id: String?, secure: Bool) -> Cookie {
        Cookie(
            name: ConsoleSessions.cookieName, value: id ?? "", maxAge: id == nil ? 0 : nil, path: "/console", secure: secure, httpOnly: true,
            sameSite: .strict)
    }

    /// Headers every console answer carries: no script, no framing, no caching, no referrer to
    /// other sites (`same-origin`, not `no-referrer`: with that a browser sends `Origin: null` on
    /// the console's own forms, which the same-site check then refuses). Inline SVG (the
    /// charts) is markup of the page: nothing here has to allow it.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff", HTTPField.Name("Referrer-Policy")!: "same-origin",
        .cacheControl: "no-store",
    ]

    static func html(_ page: HTML, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: page.text)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// No session, a missing or wrong CSRF token, or another site: 403, and nothing done.
    static func refused() -> Response {
        html(
            ConsoleHTML.page(
                title: "Refused", current: nil, signedIn: false,
                body: "<p class=\"error\" role=\"alert\">Refused: sign in again, and use the console's own forms.</p><p><a href=\"/console/sign-in\">Sign in</a></p>"),
            status: .forbidden)
    }
}
