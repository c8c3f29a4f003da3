import Testing
import TetherProtocol
import TetherStore
@testable import TetherAgent

/// How an error thrown while a session handles an event ends the session.
@Suite struct SessionFailureTests {
    @Test func eachErrorEndsTheSessionItsWay() {
        let busy = SyncError(.otherSessionError, "busy", action: .retry)
        guard case .serverError(busy) = SessionFailure(SessionInterruption.serverError(busy)) else {
            Issue.record("a server's error is judged as one")
            return
        }
        guard case .ends(.connectionLost) = SessionFailure(SessionInterruption.disconnected(nil)) else {
            Issue.record("a disconnection loses the connection")
            return
        }
        guard case .ends(.retry(nil)) = SessionFailure(SessionInterruption.unbound) else {
            Issue.record("an unbind binds again")
            return
        }
        let corrupt = StoreError.corrupt(path: "/s.sqlite", problems: ["page 3"])
        guard case .ends(.storeDamaged(corrupt)) = SessionFailure(corrupt) else {
            Issue.record("a corrupt store is quarantined")
            return
        }
        let link = StoreError.symbolicLink(path: "/s.sqlite", place: "the store")
        guard case .symbolicLink(link) = SessionFailure(link) else {
            Issue.record("a symbolic link stops the partition")
            return
        }
        let full = DiskSpaceError(path: "/var/lib/tether", needed: 10, free: 1)
        guard case .downloadRefused(full) = SessionFailure(full) else {
            Issue.record("a full disk refuses the download")
            return
        }
        guard case .other = SessionFailure(StoreError.io(path: "/s.sqlite", operation: "read", errno: 5)) else {
            Issue.record("anything else binds again")
            return
        }
    }
}
