import Testing
import TetherProtocol
import TetherSyncClient
@testable import TetherAgent

/// A failed connection attempt named by the error's type, never by its text.
@Suite struct TransportFailureTests {
    @Test(arguments: [
        (UnreachableCause.connectionRefused, "connection_refused"), (.timedOut, "timeout"), (.nameResolution, "name_resolution"),
        (.upgradeFailed, "upgrade_failed"), (.tls, "tls_failure"), (.other, "unreachable"),
    ])
    func anUnreachableServerIsNamedByItsCause(cause: UnreachableCause, name: String) {
        let error = SyncClientError.unreachable("ws://127.0.0.1:1/sync: something", cause: cause)
        let report = TransportFailure.report(error)
        #expect(report.name == name)
        #expect(report.code == nil && report.action == "transient" && report.partition == "" && report.store == "")
        #expect(report.message == "cannot reach the sync server: ws://127.0.0.1:1/sync: something", "the message is the error's own")
    }

    @Test func everyCauseHasItsOwnName() {
        let names = UnreachableCause.allCases.map(TransportFailure.name(of:))
        #expect(Set(names).count == UnreachableCause.allCases.count)
    }

    /// The text that used to decide: a host named after another kind does not change the kind.
    @Test func theTextDoesNotDecide() {
        let misleading = SyncClientError.unreachable(
            "ws://tls-upgrade-refused-timeout.example:7800/sync: connection refused, timed out, TLS handshake", cause: .nameResolution)
        #expect(TransportFailure.report(misleading).name == "name_resolution")
        #expect(TransportFailure.report(SyncClientError.closed(nil)).name == "unreachable")
        #expect(TransportFailure.report(SyncClientError.refused(.readOnly)).name == "unreachable", "a refused request is no refused connection")
        struct Other: Error, CustomStringConvertible { var description: String { "connection refused by an upgrade timeout" } }
        #expect(TransportFailure.report(Other()).name == "unreachable")
    }

    @Test func aTLSFailureAndAPinMismatchAreCasesOfTheirOwn() throws {
        #expect(TransportFailure.report(SyncClientError.tlsFailure("ws://h/sync: certificate verify failed")).name == "tls_failure")
        let pin = try #require(ServerKeyPin(base64: String(repeating: "A", count: 43) + "="))
        let mismatch = SyncClientError.serverKeyNotPinned(ServerKeyPinMismatch(host: "h", seen: pin, expected: [pin]))
        let report = TransportFailure.report(mismatch)
        #expect(report.name == "pin_mismatch")
        #expect(report.message == "\(mismatch)")
    }

    @Test func aConnectionClosedWithAnErrorIsThatError() {
        let error = SyncError(.wrongProtocolVersion, "the server speaks protocol 9")
        let report = TransportFailure.report(SyncClientError.closed(error))
        #expect(report == SyncErrorReport(error, partition: "", store: ""))
        #expect(report.code == 105 && report.name == "wrong_protocol_version")
    }
}
