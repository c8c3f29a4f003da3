import Testing
@testable import TetherServer

/// ``SyncSocketStateMachine``: pings and their timeout, the close handshake either side starts,
/// and the close codes a peer may send.
struct SyncSocketStateMachineTests {
    @Test func aPingAnsweredInTimeKeepsTheConnection() {
        var socket = SyncSocketStateMachine()
        let first = socket.pingDue(payload: [1, 2])
        #expect(first == .sendPing([1, 2]))
        socket.receivedPong([9])  // unsolicited: ignored
        socket.receivedPong([1, 2])
        let second = socket.pingDue(payload: [3])
        #expect(second == .sendPing([3]))
    }

    @Test func aPingUnansweredForAPeriodTimesOut() {
        var socket = SyncSocketStateMachine()
        _ = socket.pingDue(payload: [1])
        socket.receivedPong([2])
        let next = socket.pingDue(payload: [3])
        #expect(next == .timedOut)
    }

    @Test func ourCloseWaitsForThePeersAndRefusesData() {
        var socket = SyncSocketStateMachine()
        let sends = socket.close()
        #expect(sends)
        #expect(!socket.isOpen && !socket.answersPing())
        let again = socket.close()
        #expect(!again, "one close frame only")
        let ping = socket.pingDue(payload: [1])
        #expect(ping == .stop)
        let answer = socket.receivedClose([0x03, 0xE8])
        #expect(answer == .close)
        #expect(socket.state == .closed)
    }

    @Test func thePeersCloseIsAnswered() {
        var socket = SyncSocketStateMachine()
        let first = socket.receivedClose([0x03, 0xE9])
        #expect(first == .replyAndClose(SyncSocketStateMachine.normalClosure))
        let second = socket.receivedClose([])
        #expect(second == .none)
        let close = socket.close()
        #expect(!close)
    }

    static let codes: [([UInt8], UInt16)] = [
        ([], 1000), ([0x03, 0xE8], 1000), ([0x0F, 0xA0], 1000), ([0x03], 1002), ([0x03, 0xED], 1002),
        ([0x03, 0xEE], 1002), ([0x13, 0x88], 1002), ([0x03, 0xE8, 0xFF], 1002), ([0x03, 0xE8, 0x6F, 0x6B], 1000),
    ]

    @Test(arguments: codes) func closeCodes(payload: [UInt8], reply: UInt16) {
        #expect(SyncSocketStateMachine.replyCode(to: payload) == reply)
    }
}
