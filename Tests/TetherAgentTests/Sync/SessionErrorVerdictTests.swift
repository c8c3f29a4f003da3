import Logging
import Testing
import TetherControl
import TetherProtocol
@testable import TetherAgent

/// How a server's error ends a session and what is logged about it (docs/contract.md "Sync errors").
@Suite struct SessionErrorVerdictTests {
    static let partition = PartitionName("p")!

    @Test func eachReactionEndsTheSessionItsWay() {
        let retry = SyncError(.otherSessionError, "busy", action: .retry, hint: "wait")
        let verdict = SessionErrorVerdict(retry, partition: Self.partition)
        #expect(verdict.end == .retry(retry))
        #expect(verdict.level == .warning)
        #expect(verdict.message == "error 201 (\(retry.code.name)) on p: busy; wait")
        #expect(verdict.metadata == ["tether.error_code": .stringConvertible(201)])
        #expect(!verdict.heldForItsReset)

        let expired = SyncError(.accessTokenExpired, "expired", action: .reauth, hint: "renew")
        let reauth = SessionErrorVerdict(expired, partition: Self.partition)
        #expect(reauth.end == .retry(expired), "the token file is read again, then bind again")
        #expect(reauth.level == .error)
        #expect(reauth.message.hasSuffix("; the token file is read again before the next attempt"))

        let illegal = SyncError(.illegalPartitionName, "no such partition", action: .fatal)
        let stop = SessionErrorVerdict(illegal, partition: Self.partition)
        #expect(stop.end == .stop(reason: "error 204: no such partition"))
        #expect(stop.level == .error)
        #expect(stop.message.hasSuffix("; syncing stops until the configuration is reloaded"))
        #expect(!stop.heldForItsReset)

        let diverged = SyncError(.divergingHistories, "diverged", action: .clientReset)
        let reset = SessionErrorVerdict(diverged, partition: Self.partition)
        #expect(reset.end == .reset(diverged, storeEmptied: false))
        #expect(reset.level == .error)
        #expect(reset.heldForItsReset, "announced with the id of the reset it starts")
    }

    @Test func aProtocolMismatchCarriesItsMessageID() {
        let mismatch = SyncError(.wrongProtocolVersion, "version 3 not supported", action: .fatal)
        let verdict = SessionErrorVerdict(mismatch, partition: Self.partition)
        #expect(verdict.metadata["message_id"] == .string(TetherMessageID.protocolMismatch.rawValue))
        #expect(verdict.metadata["tether.error_code"] == .stringConvertible(105))
    }
}
