import Logging
import Testing
import TetherControl
import TetherProtocol
import TetherStore
@testable import TetherAgent

/// How an error met in a session ends it, what is logged about it and what the partition shows
/// (docs/contract.md "Sync errors"): the server's errors, then what a session's step throws.
@Suite struct SessionErrorVerdictTests {
    static let partition = PartitionName("p")!

    @Test func eachReactionEndsTheSessionItsWay() {
        let retry = SyncError(.otherSessionError, "busy", action: .retry, hint: "wait")
        let verdict = SessionErrorVerdict(serverError: retry, partition: Self.partition)
        #expect(verdict.end == .retry(retry))
        #expect(verdict.entry?.level == .warning)
        #expect(verdict.entry?.message == "error 201 (\(retry.code.name)) on p: busy; wait")
        #expect(verdict.entry?.metadata == ["tether.error_code": .stringConvertible(201)])
        #expect(verdict.shown == retry)
        #expect(!verdict.heldForItsReset)

        let expired = SyncError(.accessTokenExpired, "expired", action: .reauth, hint: "renew")
        let reauth = SessionErrorVerdict(serverError: expired, partition: Self.partition)
        #expect(reauth.end == .retry(expired), "the token file is read again, then bind again")
        #expect(reauth.entry?.level == .error)
        #expect(reauth.entry?.message.hasSuffix("; the token file is read again before the next attempt") == true)

        let illegal = SyncError(.illegalPartitionName, "no such partition", action: .fatal)
        let stop = SessionErrorVerdict(serverError: illegal, partition: Self.partition)
        #expect(stop.end == .stop(reason: "error 204: no such partition"))
        #expect(stop.entry?.level == .error)
        #expect(stop.entry?.message.hasSuffix("; syncing stops until the configuration is reloaded") == true)
        #expect(!stop.heldForItsReset)

        let diverged = SyncError(.divergingHistories, "diverged", action: .clientReset)
        let reset = SessionErrorVerdict(serverError: diverged, partition: Self.partition)
        #expect(reset.end == .reset(diverged, storeEmptied: false))
        #expect(reset.entry?.level == .error)
        #expect(reset.heldForItsReset, "announced with the id of the reset it starts")
    }

    @Test func aProtocolMismatchCarriesItsMessageID() {
        let mismatch = SyncError(.wrongProtocolVersion, "version 3 not supported", action: .fatal)
        let verdict = SessionErrorVerdict(serverError: mismatch, partition: Self.partition)
        #expect(verdict.entry?.metadata["message_id"] == .string(TetherMessageID.protocolMismatch.rawValue))
        #expect(verdict.entry?.metadata["tether.error_code"] == .stringConvertible(105))
    }

    /// (Moved from `BackoffTests.reactionsFollowTheServersAction`.)
    @Test func reactionsFollowTheServersAction() {
        typealias Reaction = SessionErrorVerdict.Reaction
        #expect(Reaction(SyncError(.divergingHistories, "x").action) == .reset)
        #expect(Reaction(SyncError(.permissionDenied, "x").action) == .reset)
        #expect(Reaction(SyncError(.badUserAuthentication, "x").action) == .reauthenticate)
        #expect(Reaction(SyncError(.accessTokenExpired, "x").action) == .reauthenticate)
        #expect(Reaction(SyncError(.wrongProtocolVersion, "x").action) == .stop)
        #expect(Reaction(SyncError(.illegalPartitionName, "x").action) == .stop)
        #expect(Reaction(SyncError(.clientFileBoundInOtherSession, "x").action) == .retry)
        // An unknown code follows the action the server sent with it.
        #expect(Reaction(SyncError(SyncErrorCode(299), "x").action) == .retry)
        #expect(Reaction(SyncError(SyncErrorCode(299), "x", action: .clientReset).action) == .reset)
        let unknownReset = SyncError(SyncErrorCode(299), "x", action: .clientReset)
        #expect(SessionErrorVerdict(serverError: unknownReset, partition: Self.partition).end == .reset(unknownReset, storeEmptied: false))
        // Whether a condition concerns the whole connection is the code's own (below 200).
        #expect(SyncErrorCode.wrongProtocolVersion.isConnectionLevel)
        #expect(!SyncErrorCode.permissionDenied.isConnectionLevel)
    }

    /// What a session's step throws takes the same path (moved from `SessionFailureTests`).
    @Test func eachThrownErrorEndsTheSessionItsWay() {
        let busy = SyncError(.otherSessionError, "busy", action: .retry)
        #expect(
            SessionErrorVerdict(SessionInterruption.serverError(busy), partition: Self.partition)
                == SessionErrorVerdict(serverError: busy, partition: Self.partition), "a server's error is judged as one")
        let lost = SessionErrorVerdict(SessionInterruption.disconnected(nil), partition: Self.partition)
        #expect(lost.end == .connectionLost && lost.entry == nil && lost.shown == nil, "a disconnection loses the connection")
        let unbound = SessionErrorVerdict(SessionInterruption.unbound, partition: Self.partition)
        #expect(unbound.end == .retry(nil) && unbound.entry == nil, "an unbind binds again")
        let corrupt = StoreError.corrupt(path: "/s.sqlite", problems: ["page 3"])
        #expect(SessionErrorVerdict(corrupt, partition: Self.partition).end == .storeDamaged(corrupt), "a corrupt store is quarantined")

        let link = StoreError.symbolicLink(path: "/s.sqlite", place: "the store")
        let stopped = SessionErrorVerdict(link, partition: Self.partition)
        #expect(stopped.end == .stop(reason: "\(link)"), "a symbolic link stops the partition")
        #expect(stopped.shown == SyncError(.badClientFile, "\(link)", action: .fatal))
        #expect(stopped.entry == .init(level: .error, message: "syncing of p stops until a reload: \(link); \(link.hint)"))

        let full = DiskSpaceError(path: "/var/lib/tether", needed: 10, free: 1)
        let refused = SessionErrorVerdict(full, partition: Self.partition)
        #expect(refused.end == .retry(nil), "a full disk refuses the download, retried")
        #expect(refused.shown == SyncError(.otherSessionError, "\(full)", action: .retry))
        #expect(refused.entry == .init(level: .error, message: "state download of p refused, retrying: \(full); \(full.hint)"))

        let io = StoreError.io(path: "/s.sqlite", operation: "read", errno: 5)
        let other = SessionErrorVerdict(io, partition: Self.partition)
        #expect(other.end == .retry(nil) && other.shown == nil, "anything else binds again")
        #expect(other.entry == .init(level: .error, message: "sync of p failed: \(io)"))
    }
}
