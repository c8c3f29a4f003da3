import Testing

@testable import TetherClient

/// Refusals and transport failures become the errors an application acts on.
@Suite struct TetherClientErrorTests {
    @Test func refusalsMapByTheirCode() {
        func error(_ response: ControlResponse) -> TetherClientError { TetherClientError.refusal(response) }
        #expect(error(.failure("no", code: .unknownPartition)) == .unknownPartition("no"))
        #expect(error(.failure("no", exitCode: 4)) == .permissionDenied("no"))
        #expect(error(.failure("slow", code: .timedOut)) == .timedOut("slow"))
        #expect(error(.failure("stopping", code: .unavailable)).isTransient)
        #expect(!error(.failure("bad", exitCode: 2)).isTransient)
        // An agent of control protocol 1 sends no code: the exit status decides.
        #expect(error(ControlResponse(ok: false, error: "denied", exitCode: 4)) == .permissionDenied("denied"))
        #expect(error(ControlResponse(ok: false, error: "bad", exitCode: 2)) == .refused(code: .badRequest, message: "bad"))
    }

    @Test func aFinishedResetIsANoticeWithBeforeAndAfter() throws {
        let event = AgentEvent(
            .resetOutcome, partition: "p", code: 211, resetID: "r1", outcome: "recovered", storePath: "/s/p.sqlite",
            backupPath: "/r/p/x-r1.sqlite")
        let notice = try #require(ClientResetNotice(event))
        #expect(notice.before == "/r/p/x-r1.sqlite" && notice.after == "/s/p.sqlite" && notice.code == 211 && notice.outcome == "recovered")
        var superseded = event
        superseded.outcome = "superseded"
        #expect(ClientResetNotice(superseded) == nil)
        #expect(ClientResetNotice(AgentEvent(.syncError, partition: "p", code: 211)) == nil)
    }
}
