import Testing
import TetherProtocol
@testable import TetherAgent

/// An event that ends a download becomes the interruption the session's verdict reads: the
/// server's error as it came, the connection's error, and anything else as an unbind.
@Suite struct SessionInterruptionTests {
    @Test func theServersErrorIsKeptAsItCame() {
        let error = SyncError(.divergingHistories, "restored from a backup")
        guard case .serverError(let kept) = SessionInterruption(.error(error)) else {
            Issue.record("not a server error")
            return
        }
        #expect(kept == error)
    }

    @Test func aDisconnectionKeepsItsErrorOrItsAbsence() {
        let error = SyncError(.otherError, "the connection closed")
        guard case .disconnected(let kept) = SessionInterruption(.disconnected(error)),
              case .disconnected(let none) = SessionInterruption(.disconnected(nil))
        else {
            Issue.record("not a disconnection")
            return
        }
        #expect(kept == error)
        #expect(none == nil)
    }

    @Test func anUnbindIsAnUnbind() {
        guard case .unbound = SessionInterruption(.unbound) else {
            Issue.record("not an unbind")
            return
        }
    }
}
