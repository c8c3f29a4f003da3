import Testing
import TetherProtocol

/// Remote actions on the wire and in the server's connection machine (protocol 8;
/// docs/protocol.md, "`8c` action" and "`0a` action-result").
@Suite struct RemoteActionTests {
    typealias Machine = ServerConnectionStateMachine

    static let reset = RemoteAction(id: 11, kind: .initiateReset, partition: "store-1")
    static let diagnostics = RemoteAction(id: 12, kind: .diagnostics)

    @Test func bothMessagesRoundTrip() throws {
        for action in [Self.reset, Self.diagnostics, RemoteAction(id: 3, kind: RemoteActionKind(rawValue: "reboot-the-till"))] {
            let message = ServerMessage.action(action)
            #expect(try ServerMessage.decode(message.encoded()) == message)
            #expect(message.name == "action" && message.session == nil)
        }
        #expect(ServerMessage.action(Self.diagnostics).encoded() == [0x8c, 12, 11] + Array("diagnostics".utf8) + [0])
        let result = ClientMessage.actionResult(RemoteActionResult(id: 11, outcome: .refused, message: "no reset waits", report: [0x7b, 0x7d]))
        #expect(try ClientMessage.decode(result.encoded()) == result)
        #expect(result.name == "action-result" && result.session == nil)
    }

    @Test func anUnknownKindDecodesAndIsNotKnown() throws {
        let kind = RemoteActionKind(rawValue: "format-disk")
        #expect(!kind.isKnown)
        #expect(RemoteActionKind.all.allSatisfy { $0.isKnown })
        #expect(!RemoteActionKind.acceptedByDefault.contains(.pause))
        #expect(RemoteActionKind.initiateReset.needsPartition && !RemoteActionKind.diagnostics.needsPartition)
    }

    /// An action's bytes with its fields written as given.
    static func action(id: UInt64, kind: String, partition: String) -> [UInt8] {
        var w = ByteWriter()
        w.byte(MessageType.action.rawValue)
        w.varint(id)
        w.string(kind)
        w.string(partition)
        return w.bytes
    }

    @Test func hostileActionsAreMalformed() {
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(Self.action(id: 0, kind: "pause", partition: "p")) }
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(Self.action(id: 1, kind: "", partition: "p")) }
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(Self.action(id: 1, kind: "pause\n", partition: "p")) }
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(Self.action(id: 1, kind: "pause", partition: "p\u{1b}[2J")) }
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(Self.action(id: 1, kind: String(repeating: "k", count: 65), partition: "")) }
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(Self.action(id: 1, kind: "pause", partition: "p") + [0]) }
    }

    /// A result's bytes with its fields written as given.
    static func result(outcome: UInt8, message: String, report: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.byte(MessageType.actionResult.rawValue)
        w.varint(5)
        w.byte(outcome)
        w.string(message)
        w.lengthPrefixed(report)
        return w.bytes
    }

    @Test func hostileResultsAreMalformed() {
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(Self.result(outcome: 3, message: "", report: [])) }
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(Self.result(outcome: 0, message: "a\u{202e}b", report: [])) }
        #expect(throws: WireDecodeError.self) {
            try ClientMessage.decode(Self.result(outcome: 0, message: String(repeating: "m", count: ProtocolLimits.maxActionMessageBytes + 1), report: []))
        }
        #expect(throws: WireDecodeError.self) {
            try ClientMessage.decode(Self.result(outcome: 0, message: "", report: [UInt8](repeating: 0x20, count: ProtocolLimits.maxActionReportBytes + 1)))
        }
        #expect(throws: Never.self) {
            try ClientMessage.decode(Self.result(outcome: 0, message: "", report: [UInt8](repeating: 0x20, count: ProtocolLimits.maxActionReportBytes)))
        }
    }

    @Test func aMessageIsMadeSendable() {
        #expect(RemoteActionResult.sendable("line one\nline two\u{1b}") == "line one line two ")
        let long = RemoteActionResult.sendable(String(repeating: "é", count: ProtocolLimits.maxActionMessageBytes))
        #expect(long.utf8.count <= ProtocolLimits.maxActionMessageBytes && long.utf8.count > ProtocolLimits.maxActionMessageBytes - 2)
    }

    @Test func aReportCarriesTheAcceptedActionsOnlyWhenItHasThem() throws {
        let bare = DeviceReport(token: "t", deviceID: "d", deviceName: "n", release: "r", entries: [])
        #expect(try ClientMessage.decode(ClientMessage.report(bare).encoded()) == .report(bare), "a protocol-7 report has no trailer")
        var listing = bare
        listing.acceptedActions = [.initiateReset, .diagnostics]
        #expect(try ClientMessage.decode(ClientMessage.report(listing).encoded()) == .report(listing))
        var none = bare
        none.acceptedActions = []
        #expect(try ClientMessage.decode(ClientMessage.report(none).encoded()) == .report(none), "an empty list is not a missing one")
        var twice = bare
        twice.acceptedActions = [.pause, .pause]
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(ClientMessage.report(twice).encoded()) }
        var many = bare
        many.acceptedActions = (0...ProtocolLimits.maxActionKinds).map { RemoteActionKind(rawValue: "k\($0)") }
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(ClientMessage.report(many).encoded()) }
    }

    /// A ready connection speaking `negotiated`.
    static func connection(negotiated: Int = TetherVersion.syncProtocol) -> Machine {
        var machine = Machine(software: "s")
        _ = machine.received(.hello(Hello(protocolVersion: negotiated, software: "agent")))
        return machine
    }

    @Test func eachActionIsSentOncePerConnectionAndAnsweredOnce() {
        var machine = Self.connection()
        #expect(machine.speaksRemoteActions)
        #expect(machine.offerActions([Self.diagnostics, Self.reset]) == [.send(.action(Self.reset)), .send(.action(Self.diagnostics))])
        #expect(machine.offerActions([Self.reset, Self.diagnostics]).isEmpty, "already sent here")
        let result = RemoteActionResult(id: 11, outcome: .done, message: "initiated")
        #expect(machine.received(.actionResult(result)) == [.finishAction(Self.reset, result)])
        #expect(machine.awaitedActions.keys.sorted() == [12])
        #expect(machine.offerActions([Self.reset]).isEmpty, "answered: not sent again on this connection")
        let again = machine.received(.actionResult(result))
        #expect(again.last == .close, "a second answer is a violation")
        #expect(machine.state == .closed)
    }

    @Test func aResultForAnActionNotSentIsAViolation() {
        var machine = Self.connection()
        let actions = machine.received(.actionResult(RemoteActionResult(id: 99, outcome: .done, message: "")))
        guard case .send(.error(let error)) = actions.first else { Issue.record("no error sent"); return }
        #expect(error.error.code == .badMessageOrder && actions.last == .close)
    }

    @Test func anOlderAgentIsNeverSentAnActionAndMayNotAnswerOne() {
        // An agent before remote actions is no longer accepted by this server's hello: built ready.
        var machine = Machine(state: .ready, negotiated: TetherVersion.remoteActions - 1)
        #expect(!machine.speaksRemoteActions)
        #expect(machine.offerActions([Self.reset]).isEmpty)
        #expect(machine.received(.actionResult(RemoteActionResult(id: 11, outcome: .done, message: ""))).last == .close)
        var closed = Self.connection()
        _ = closed.connectionClosed()
        #expect(closed.offerActions([Self.reset]).isEmpty)
    }

    @Test func atMostSoManyAwaitAnAnswerAndTheRestFollowAnswers() {
        var machine = Self.connection()
        let many = (1...Int64(Machine.maxAwaitedActions + 3)).map { RemoteAction(id: $0, kind: .retryNow) }
        #expect(machine.offerActions(many).count == Machine.maxAwaitedActions)
        _ = machine.received(.actionResult(RemoteActionResult(id: 1, outcome: .done, message: "")))
        #expect(machine.offerActions(many) == [.send(.action(many[Machine.maxAwaitedActions]))])
    }

    @Test func closingForgetsWhatAwaitsAnAnswer() {
        var machine = Self.connection()
        _ = machine.offerActions([Self.reset])
        _ = machine.connectionClosed()
        #expect(machine.awaitedActions.isEmpty)
    }

    @Test func theClientHandsActionsToItsOwner() {
        var machine = ClientConnectionStateMachine(state: .ready)
        #expect(machine.received(.action(Self.reset)) == [.action(Self.reset)])
        var waiting = ClientConnectionStateMachine()
        #expect(waiting.received(.action(Self.reset)).last.map { if case .close = $0 { true } else { false } } == true)
    }
}
