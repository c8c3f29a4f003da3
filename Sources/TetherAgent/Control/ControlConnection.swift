import Foundation
import Glibc
import TetherControl

/// A request that could not be read or decoded.
struct ControlRequestError: Error, Sendable {
    var message: String
}

/// One accepted, permitted client with its request read; answered once, then closed.
struct ControlConnection: Sendable {
    /// How long a client has to read its answer (and close), from when the answer is ready.
    static let answerTimeout: Duration = .seconds(5)
    /// What is read and dropped after the answer, at most (a client still sending).
    static let drainLimit = 4 * 1024 * 1024

    let fd: Int32
    let request: Result<ControlRequest, ControlRequestError>
    let peer: ControlPeer
    /// Whether the peer may run changing commands (``ControlAccess/mayChange(_:)``).
    let mayChange: Bool
    let budget: ControlClientBudget

    /// Answers and closes, on a thread of its own: the write waits for the client (under
    /// ``answerTimeout`` for the whole answer), which must never hold a Swift concurrency
    /// thread. Returns at once.
    func respond(_ response: ControlResponse) {
        let bytes = Self.line(response)
        budget.take()
        let fd = self.fd
        let budget = self.budget
        let thread = Thread {
            Self.answer(fd, bytes, deadline: .now + Self.answerTimeout)
            budget.release()
        }
        thread.name = "tether-control-answer"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// The response as one JSON line. A response that cannot be encoded (a non-finite number in
    /// a report) is answered as an error: a client is never left without an answer.
    static func line(_ response: ControlResponse) -> [UInt8] {
        // Unencodable (a non-finite number): the internal error, as said above.
        var bytes = (try? JSONEncoder().encode(response)).map { Array($0) } ?? Array(#"{"ok":false,"error":"internal error"}"#.utf8)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Writes `bytes`, says we are done, reads what the client still sends until it closes
    /// (closing with unread input would reset the connection and lose the answer), and closes;
    /// all before `deadline`.
    static func answer(_ fd: Int32, _ bytes: [UInt8], deadline: ContinuousClock.Instant) {
        if ControlSocketIO.writeAll(fd, bytes, deadline: deadline) {
            Glibc.shutdown(fd, Int32(SHUT_WR))
            ControlSocketIO.drain(fd, limit: drainLimit, deadline: deadline)
        }
        close(fd)
    }

    /// Answers without waiting and closes at once: for a client that is not let in (too many
    /// clients, its request too slow). The line is small and the socket's buffer empty, so it
    /// goes out whole unless the client is gone.
    static func refuse(_ fd: Int32, _ response: ControlResponse) {
        let bytes = line(response)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.shutdown(fd, Int32(SHUT_WR))
        ControlSocketIO.discardQueued(fd)
        close(fd)
    }
}
