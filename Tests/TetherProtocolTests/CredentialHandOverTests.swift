import Testing
import TetherProtocol

/// Credential rotation on the wire and in the server's connection machine (protocol 7;
/// docs/protocol.md, "`8b` credential" and "`09` credential-accepted").
@Suite struct CredentialHandOverTests {
    typealias Machine = ServerConnectionStateMachine

    static let deviceID = "0123456789abcdef0123456789abcdef"
    static let credential = DeviceCredential(deviceID: deviceID, secret: String(repeating: "A", count: 43))
    static let digest = [UInt8](repeating: 0xab, count: 32)

    @Test func bothMessagesRoundTrip() throws {
        let handed = ServerMessage.credential(Self.credential)
        #expect(try ServerMessage.decode(handed.encoded()) == handed)
        #expect(handed.name == "credential" && handed.session == nil)
        let accepted = ClientMessage.credentialAccepted(digest: Self.digest)
        #expect(try ClientMessage.decode(accepted.encoded()) == accepted)
        #expect(accepted.name == "credential-accepted" && accepted.session == nil)
        #expect(accepted.encoded() == [0x09] + Self.digest)
    }

    @Test(arguments: [
        "tek1.00000000000000a1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // an enrollment key
        "tdc1.0123456789abcdef0123456789abcdef.short",
        " tdc1.0123456789abcdef0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // not as it is written
        "a user's token",
    ])
    func aCredentialThatIsNotOneIsMalformed(text: String) {
        var w = ByteWriter()
        w.byte(MessageType.credential.rawValue)
        w.string(text)
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(w.bytes) }
    }

    @Test(arguments: [0, 31, 33])
    func anAcknowledgementCarriesExactlyADigest(length: Int) {
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode([0x09] + [UInt8](repeating: 1, count: length)) }
    }

    /// A ready connection speaking `negotiated`, with session 7 bound.
    static func connection(negotiated: Int = TetherVersion.syncProtocol) -> Machine {
        var machine = Machine(software: "s")
        _ = machine.received(.hello(Hello(protocolVersion: negotiated, software: "agent")))
        _ = machine.received(.bind(Fixtures.bind))
        _ = machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: Fixtures.version))
        return machine
    }

    @Test func oneHandOverPerDeviceUntilItIsAcknowledged() {
        var machine = Self.connection()
        let began = machine.beginHandOver(to: Self.deviceID)
        #expect(began)
        let again = machine.beginHandOver(to: Self.deviceID)
        #expect(!again, "one is being prepared")
        let other = machine.beginHandOver(to: "another-device")
        #expect(other, "devices are apart")
        let sent = machine.handOver(Self.credential, digest: Self.digest)
        #expect(sent == [.send(.credential(Self.credential))])
        #expect(machine.handOvers[Self.deviceID] == .awaitingAcknowledgement(Self.digest))
        let whileAwaited = machine.beginHandOver(to: Self.deviceID)
        #expect(!whileAwaited, "one awaits its acknowledgement")
        let unprepared = machine.handOver(Self.credential, digest: Self.digest)
        #expect(unprepared == [], "not being prepared")
        let acknowledged = machine.received(.credentialAccepted(digest: Self.digest))
        #expect(acknowledged == [.completeRotation(deviceID: Self.deviceID, digest: Self.digest)])
        #expect(machine.state == .ready && machine.sessionState(7) != nil)
        let next = machine.beginHandOver(to: Self.deviceID)
        #expect(next, "acknowledged: the next rotation may begin")
    }

    @Test func anAbandonedHandOverMayBeginAgain() {
        var machine = Self.connection()
        let begun = machine.beginHandOver(to: Self.deviceID)
        #expect(begun)
        machine.handOverAbandoned(deviceID: Self.deviceID)
        #expect(machine.handOvers.isEmpty)
        let begunAgain = machine.beginHandOver(to: Self.deviceID)
        #expect(begunAgain)
        _ = machine.handOver(Self.credential, digest: Self.digest)
        machine.handOverAbandoned(deviceID: Self.deviceID)
        #expect(machine.handOvers[Self.deviceID] == .awaitingAcknowledgement(Self.digest), "a sent one is not abandoned")
    }

    @Test func anAcknowledgementOfAnotherDigestIsAViolation() {
        var machine = Self.connection()
        _ = machine.beginHandOver(to: Self.deviceID)
        _ = machine.handOver(Self.credential, digest: Self.digest)
        let actions = machine.received(.credentialAccepted(digest: [UInt8](repeating: 1, count: 32)))
        guard case .send(.error(let message)) = actions.first else {
            Issue.record("no error: \(actions)")
            return
        }
        #expect(message.error.code == .badMessageOrder && message.session == nil)
        #expect(actions.last == .close && machine.state == .closed && machine.handOvers.isEmpty)
    }

    @Test func aConnectionOfAnOlderProtocolIsNeverHandedOne() {
        // A connection that negotiated 6 (a server speaking 7 accepts it; one speaking 8 no
        // longer does): made ready at that version directly.
        var machine = Machine(state: .ready, negotiated: TetherVersion.credentialRotation - 1)
        let older = machine.beginHandOver(to: Self.deviceID)
        #expect(!older)
        let actions = machine.received(.credentialAccepted(digest: Self.digest))
        #expect(actions.last == .close && machine.state == .closed)
    }

    @Test func aClosedConnectionForgetsItsHandOvers() {
        var machine = Self.connection()
        _ = machine.beginHandOver(to: Self.deviceID)
        _ = machine.connectionClosed()
        let afterClose = machine.beginHandOver(to: Self.deviceID)
        #expect(machine.handOvers.isEmpty && !afterClose)
        let late = machine.handOver(Self.credential, digest: Self.digest)
        #expect(late == [], "prepared while it closed: not sent")
    }
}
