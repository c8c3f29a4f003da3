import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web console's HTTP plumbing: its cookie, same-site and form checks, and answers with
/// the headers every console page carries.
enum ConsoleHTTP {
    static func sessionID(_ request: Request) -> String? { ConsoleSessions.sessionID(cookieHeader: request.headers[.cookie]) }

    /// Not from another site: `Origin`, when sent, names this host; `Sec-Fetch-Site` is not `cross-site`.
    static func sameSite(_ request: Request) -> Bool {
        if request.headers[values: HTTPField.Name("Sec-Fetch-Site")!].contains("cross-site") { return false }
        guard let origin = request.headers[values: HTTPField.Name("Origin")!].first else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// An `application/x-www-form-urlencoded` body (64 KiB at most unless told).
    static func form(_ request: Request, upTo limit: Int = 64 << 10) async throws -> [String: String] {
        var request = request
        let buffer = try await request.collectBody(upTo: limit)
        var fields: [String: String] = [:]
        for pair in String(buffer: buffer).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }


    /// Headers every console answer carries: no script, no framing, no caching, no referrer to
    /// other sites (`same-origin`, not `no-referrer`: with that a browser sends `Origin: null` on
    /// the console's own forms, which the same-site check then refuses).
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff", HTTPField.Name("Referrer-Policy")!: "same-origin",
        .cacheControl: "no-store",
    ]

    static func html(_ page: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    static func redirect(_ location: String) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
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
