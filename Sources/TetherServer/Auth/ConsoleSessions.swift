import Foundation
import Synchronization

/// The web console's signed-in sessions (docs/server.md, "Web console"): a session is made
/// when the admin token is given on the sign-in form, and known by a random id in an
/// `HttpOnly`, `SameSite=Strict` cookie; every form carries the session's CSRF token. Ids and
/// CSRF tokens are 256 random bits; only the ids' SHA-256 digests are kept, compared in
/// constant time. A session ends after ``idleLimit`` unused or ``lifetime`` in all, when
/// signed out, or when the admin token changes (a reload); at most ``capacity`` exist (the
/// oldest goes). Held in memory: a restart signs everyone out.
///
/// The connection guard asks ``isSignedIn(cookieHeader:)`` on the event loop, so a console
/// request with a live session counts as authenticated (its connection is not held to the
/// limits of connections that have not authenticated).
package final class ConsoleSessions: Sendable {
    package static let cookieName = "tether_console"
    static let idleLimit: Duration = .seconds(30 * 60)
    static let lifetime: Duration = .seconds(12 * 3600)
    static let capacity = 64

    struct Session: Sendable {
        var csrf: String
        let created: ContinuousClock.Instant
        var lastUsed: ContinuousClock.Instant
    }

    private let sessions = Mutex<[TokenDigest: Session]>([:])

    package init() {}

    /// A new session: its id (for the cookie) and its CSRF token.
    func open(now: ContinuousClock.Instant = .now) -> (id: String, csrf: String) {
        let id = TokenMinter.newToken()
        let csrf = TokenMinter.newToken()
        sessions.withLock { sessions in
            sessions = sessions.filter { Self.isLive($0.value, at: now) }
            if sessions.count >= Self.capacity, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
                sessions[oldest] = nil
            }
            sessions[TokenDigest(token: id)] = Session(csrf: csrf, created: now, lastUsed: now)
        }
        return (id, csrf)
    }

    /// The session of `id`, marked used; nil when unknown or expired.
    func session(_ id: String?, now: ContinuousClock.Instant = .now) -> Session? {
        guard let id, !id.isEmpty else { return nil }
        let key = TokenDigest(token: id)
        return sessions.withLock { sessions in
            guard var session = sessions[key], Self.isLive(session, at: now) else {
                sessions[key] = nil
                return nil
            }
            session.lastUsed = now
            sessions[key] = session
            return session
        }
    }

    /// Ends the session of `id`.
    func close(_ id: String?) {
        guard let id else { return }
        _ = sessions.withLock { $0.removeValue(forKey: TokenDigest(token: id)) }
    }

    /// Ends every session (the admin token changed).
    func closeAll() { sessions.withLock { $0 = [:] } }

    /// Whether a `Cookie` header names a live session (for the connection guard; does not
    /// mark it used).
    func isSignedIn(cookieHeader: String?) -> Bool {
        guard let id = Self.sessionID(cookieHeader: cookieHeader) else { return false }
        let key = TokenDigest(token: id)
        let now = ContinuousClock.now
        return sessions.withLock { sessions in sessions[key].map { Self.isLive($0, at: now) } ?? false }
    }

    var count: Int { sessions.withLock { $0.count } }

    /// Whether `presented` is the session's CSRF token (constant time).
    static func csrfMatches(_ session: Session, _ presented: String?) -> Bool {
        guard let presented else { return false }
        return TokenDigest(token: session.csrf).constantTimeEquals(TokenDigest(token: presented))
    }

    /// The console cookie's value in a `Cookie` header.
    static func sessionID(cookieHeader: String?) -> String? {
        guard let header = cookieHeader else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    private static func isLive(_ session: Session, at now: ContinuousClock.Instant) -> Bool {
        now - session.lastUsed < idleLimit && now - session.created < lifetime
    }
}
