import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// `POST /console/sign-in` (docs/server.md, "Web console"): a peer waiting after too many wrong
/// tokens (``SignInThrottle``) is answered 429 with `Retry-After` before the body is read; the
/// form is read only up to ``maximumBody`` (413 past it); a wrong token is counted for the peer
/// and logged folded, with the peer's address and never the token.
struct ConsoleSignIn: Sendable {
    /// The sign-in form holds one token: a few KiB are plenty.
    static let maximumBody = 4 << 10

    let control: ServerControl
    let sessions: ConsoleSessions
    let secure: Bool
    let throttle = SignInAttempts()

    /// The sign-in form: the admin token.
    struct Form: Decodable { var token: String? }

    func handle(_ request: Request, peer: String, now: ContinuousClock.Instant = .now) async throws -> Response {
        let (admission, line) = throttle.admit(peer, now: now)
        if let line { log(line) }
        if case .wait(let seconds) = admission {
            var response = ConsoleHTTP.html(
                ConsolePages.signIn(error: "Too many wrong tokens from your address: try again in \(seconds) s."), status: .tooManyRequests)
            response.headers[.retryAfter] = "\(seconds)"
            return response
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > Self.maximumBody {
            return ConsoleHTTP.html(ConsolePages.signIn(error: "The sign-in form was too large."), status: .contentTooLarge)
        }
        let form: Form
        do {
            var request = request
            let body = try await request.collectBody(upTo: Self.maximumBody)
            // A form that does not parse holds no token: refused as a wrong one.
            form = (try? URLEncodedFormDecoder().decode(Form.self, from: String(buffer: body))) ?? Form()
        } catch is NIOTooManyBytesError {
            return ConsoleHTTP.html(ConsolePages.signIn(error: "The sign-in form was too large."), status: .contentTooLarge)
        }
        guard ConsoleHTTP.sameSite(request) else { return ConsoleHTTP.refused() }
        guard control.policy.adminGate.accepts(authorization: "Bearer " + (form.token ?? "")) else {
            if let line = throttle.failed(peer, now: now) { log(line) }
            return ConsoleHTTP.html(ConsolePages.signIn(error: "That is not the admin token."), status: .unauthorized)
        }
        throttle.succeeded(peer)
        let (id, _) = sessions.open()
        control.logger.notice("console signed in from \(peer)", metadata: ["peer": "\(peer)"])
        var response = ConsoleHTTP.redirect("/console/partitions")
        response.setCookie(ConsoleHTTP.sessionCookie(id, secure: secure))
        return response
    }

    private func log(_ line: SignInThrottle.LogLine) {
        control.logger.notice("\(line.message)", metadata: ["peer": "\(line.peer)"])
    }
}

/// The console's ``SignInThrottle``, shared by every request of the admin listener.
final class SignInAttempts: Sendable {
    private let throttle = Mutex(SignInThrottle())

    func admit(_ peer: String, now: ContinuousClock.Instant) -> (SignInThrottle.Admission, SignInThrottle.LogLine?) {
        throttle.withLock { $0.admit(peer, now: now) }
    }

    func failed(_ peer: String, now: ContinuousClock.Instant) -> SignInThrottle.LogLine? {
        throttle.withLock { $0.failed(peer, now: now).log }
    }

    func succeeded(_ peer: String) { throttle.withLock { $0.succeeded(peer) } }
}
