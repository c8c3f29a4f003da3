/// The WebSocket side of one `/sync` connection, pure (RFC 6455's close handshake and the
/// server's pings): what ``SyncChannelHandler`` does with a control frame, a ping tick or a
/// close it starts. Its messages are not its business (``MessageAssembler``, the connection's
/// own state machine).
struct SyncSocketStateMachine: Sendable {
    enum State: Sendable, Equatable {
        /// `ping`: the payload of the ping not yet answered, nil when none is.
        case open(ping: [UInt8]?)
        /// Our close frame is sent; waiting for the peer's (or the close timeout).
        case closing
        case closed
    }

    enum PingAction: Sendable, Equatable {
        case sendPing([UInt8])
        /// The last ping went unanswered for a whole period: close with 1001 and end.
        case timedOut
        /// Closing or closed: no more pings.
        case stop
    }

    enum CloseAction: Sendable, Equatable {
        /// Reply with a close frame of this code, then close the channel.
        case replyAndClose(UInt16)
        /// The peer answered our close: close the channel.
        case close
        case none
    }

    static let normalClosure: UInt16 = 1000
    static let goingAway: UInt16 = 1001
    static let protocolError: UInt16 = 1002

    private(set) var state: State = .open(ping: nil)

    /// Data frames are read only while open; after our close frame the rest is dropped.
    var isOpen: Bool { if case .open = state { true } else { false } }

    /// A ping period passed; `payload` is a fresh random payload for the next ping.
    mutating func pingDue(payload: [UInt8]) -> PingAction {
        switch state {
        case .open(let outstanding):
            if outstanding != nil { return .timedOut }
            state = .open(ping: payload)
            return .sendPing(payload)
        case .closing, .closed:
            return .stop
        }
    }

    /// A pong: it answers the outstanding ping when it carries its payload (others are unsolicited
    /// and ignored, as RFC 6455 allows).
    mutating func receivedPong(_ payload: [UInt8]) {
        if case .open(let outstanding?) = state, outstanding == payload { state = .open(ping: nil) }
    }

    /// A ping is answered with a pong of the same payload while open.
    func answersPing() -> Bool { isOpen }

    /// We close (the connection's machine closed it, a protocol error, a shutdown): true when
    /// the close frame is to be sent now.
    mutating func close() -> Bool {
        guard isOpen else { return false }
        state = .closing
        return true
    }

    /// The peer's close frame, `payload` its body (a code, then a reason).
    mutating func receivedClose(_ payload: [UInt8]) -> CloseAction {
        switch state {
        case .open:
            state = .closed
            return .replyAndClose(Self.replyCode(to: payload))
        case .closing:
            state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// The channel closed under us.
    mutating func channelClosed() {
        state = .closed
    }

    /// 1000 for a close without a body or with a code a peer may send, 1002 for a body of one
    /// byte, a code reserved for the protocol itself or out of range, or a reason that is not UTF-8.
    static func replyCode(to payload: [UInt8]) -> UInt16 {
        if payload.isEmpty { return normalClosure }
        guard payload.count >= 2 else { return protocolError }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        let valid = (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
        guard valid, String(validating: payload.dropFirst(2), as: UTF8.self) != nil else { return protocolError }
        return normalClosure
    }
}
