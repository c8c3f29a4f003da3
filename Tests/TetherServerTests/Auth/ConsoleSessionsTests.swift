import Testing
@testable import TetherServer

/// The web console's sessions (``ConsoleSessions``): random ids and CSRF tokens, idle and
/// total lifetimes, a bound, the cookie the connection guard reads.
@Suite struct ConsoleSessionsTests {
    @Test func aSessionLivesWhileUsedAndEndsIdleOrOld() {
        let sessions = ConsoleSessions()
        let start = ContinuousClock.now
        let (id, csrf) = sessions.open(now: start)
        #expect(id.count == 64 && csrf.count == 64 && id != csrf)
        let session = sessions.session(id, now: start + .seconds(60))
        #expect(session?.csrf == csrf)
        #expect(ConsoleSessions.csrfMatches(session!, csrf) && !ConsoleSessions.csrfMatches(session!, "x") && !ConsoleSessions.csrfMatches(session!, nil))
        // Used every 20 minutes it lives, up to 12 hours in all.
        var now = start
        for _ in 0..<30 {
            now = now + .seconds(20 * 60)
            #expect(sessions.session(id, now: now) != nil)
        }
        now = start + .seconds(12 * 3600 + 1)
        #expect(sessions.session(id, now: now) == nil, "past its lifetime")
        let (other, _) = sessions.open(now: start)
        #expect(sessions.session(other, now: start + .seconds(31 * 60)) == nil, "idle for 31 minutes")
        #expect(sessions.session(nil) == nil && sessions.session("") == nil && sessions.session("guess") == nil)
    }

    @Test func signOutTokenChangesAndTheBoundEndSessions() {
        let sessions = ConsoleSessions()
        let (id, _) = sessions.open()
        #expect(sessions.isSignedIn(cookieHeader: "a=b; tether_console=\(id); c=d"))
        #expect(!sessions.isSignedIn(cookieHeader: "tether_console=\(id)x") && !sessions.isSignedIn(cookieHeader: nil))
        sessions.close(id)
        #expect(!sessions.isSignedIn(cookieHeader: "tether_console=\(id)"))
        let ids = (0..<(ConsoleSessions.capacity + 5)).map { _ in sessions.open().id }
        #expect(sessions.count == ConsoleSessions.capacity)
        #expect(sessions.session(ids.first) == nil && sessions.session(ids.last) != nil, "the oldest went")
        sessions.closeAll()
        #expect(sessions.count == 0)
    }
}
