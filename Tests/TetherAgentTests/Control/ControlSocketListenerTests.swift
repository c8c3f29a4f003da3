import Foundation
import Glibc
import Logging
import Synchronization
import Testing
@testable import TetherAgent
import TetherControl
import TetherTestSupport

// Issue 46, finding 5: the control socket reads each client on its own, under a deadline for
// the whole request, and bounds how many it reads at once.
private struct StatusHandler: ControlHandler {
    func handle(_ request: ControlRequest) async -> ControlResponse {
        request.command == .status ? .success(["partitions": []]) : .failure("unsupported in this test")
    }
}

/// A raw client of the control socket (not tetherctl): it connects, then sends what a test
/// says when it says it.
private final class RawClient: Sendable {
    let fd: Int32

    init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let connected = UnixAddress.withSockaddr(path: path) { connect(fd, $0, $1) }
        guard connected == 0 else {
            close(fd)
            throw TestSupportError("cannot connect to \(path): errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Reads until the server closes (or `timeout`); what it said, and whether it closed.
    func readUntilClosed(timeout: Int32) -> (reply: String, closed: Bool) {
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, timeout) > 0 else { return (String(decoding: reply, as: UTF8.self), false) }
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { return (String(decoding: reply, as: UTF8.self), true) }
            reply += chunk[0..<n]
        }
    }
}

/// Sends `bytes` one a second on a thread of its own (a blocking drip must not hold a Swift
/// concurrency thread), noting whether the server closed the connection before the last
/// byte and what it said.
private final class Drip: Sendable {
    struct State { var sent = 0, closedByServer = false, finished = false, reply = "" }
    let state = Mutex(State())

    init(_ client: RawClient, bytes: [UInt8]) {
        let thread = Thread { [self] in
            defer { state.withLock { $0.finished = true } }
            for byte in bytes {
                let sent = withUnsafeBytes(of: byte) { send(client.fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
                if sent != 1 {
                    // Closed between two bytes (on a loaded machine the read below can time
                    // out just before the server's answer): what it answered is still to read.
                    let (reply, _) = client.readUntilClosed(timeout: 1000)
                    state.withLock {
                        $0.closedByServer = true
                        $0.reply = reply
                    }
                    return
                }
                state.withLock { $0.sent += 1 }
                // Waits a second for the next byte, unless the server answers and closes first.
                let (reply, closed) = client.readUntilClosed(timeout: 1000)
                if closed {
                    state.withLock {
                        $0.closedByServer = true
                        $0.reply = reply
                    }
                    return
                }
            }
        }
        thread.start()
    }

    var current: State { state.withLock { $0 } }
}

private func withListenerControlServer(_ body: @Sendable (String) async throws -> Void) async throws {
    try await withRunningControlServer(handler: StatusHandler(), prefix: "tether-ctl-listener", body)
}

private func tetherctlStatus(_ socket: String) async throws -> ChildProcess.Result {
    try await ChildProcess.run(try BuiltProducts.executable("tetherctl"), ["--socket", socket, "--timeout", "60", "status", "--json"])
}

/// A client of the store group sending its request one byte a second held every other
/// client up for as long as it dripped (the request was read on the accept thread, with a
/// timeout per read). Now another client's status answers while it drips, and the slow one
/// is closed at the whole-request deadline (5 s), long before its 25 bytes are out.
@Test func aClientSendingOneByteASecondDelaysNobodyAndIsClosedAtTheDeadline() async throws {
    try await withListenerControlServer { socket in
        let slow = try RawClient(socket)
        let request = Array(#"{"command":"status"}     "#.utf8)
        let drip = Drip(slow, bytes: request)
        try await eventually("the slow client is dripping") { drip.current.sent >= 2 }
        let started = ContinuousClock.now
        let status = try await tetherctlStatus(socket)
        let took = ContinuousClock.now - started
        let whenAnswered = drip.current
        #expect(status.status == 0, "\(status)")
        // On a loaded machine starting tetherctl may take longer than the slow client's
        // deadline, so it may be closed already; what must not be is that status waited for
        // all of its bytes (as when one thread read every request in turn).
        #expect(whenAnswered.sent < request.count, "status answered only after the slow client had sent all its \(request.count) bytes (\(took))")
        try await eventually("the slow client is closed", timeout: .seconds(30)) { drip.current.finished }
        let end = drip.current
        #expect(end.closedByServer, "the server never closed the slow client; it sent all \(end.sent) bytes")
        #expect(end.sent < 15, "closed only after \(end.sent) bytes at one a second; the request deadline is 5 s")
        #expect(end.reply.contains("no complete request within"), "\(end.reply)")
    }
}

/// More clients than the budget, none sending: the one past it is closed at once with an
/// error line, the others at their deadline, and then the socket answers again.
@Test func clientsPastTheBudgetAreClosedAtOnceWithAClearError() async throws {
    try await withListenerControlServer { socket in
        let limit = ControlClientBudget.defaultLimit
        let silent = try (0..<limit).map { _ in try RawClient(socket) }
        // The accept thread takes them in order: once the last silent one holds its slot, the
        // next connection finds none.
        let refusal = try await eventually("a connection past the budget is refused", timeout: .seconds(30)) { () -> String? in
            let extra = try RawClient(socket)
            let (reply, closed) = await BlockingCall.run { extra.readUntilClosed(timeout: 2000) }
            return closed && reply.contains("tetherd is busy") ? reply : nil
        }
        #expect(refusal.contains("\"ok\":false") && refusal.contains("unavailable"), "\(refusal)")
        // The silent ones are closed at the request deadline, each with its reason.
        for client in silent {
            let (reply, closed) = await BlockingCall.run { client.readUntilClosed(timeout: 30_000) }
            #expect(closed && reply.contains("no complete request within"), "\(reply)")
        }
        let status = try await tetherctlStatus(socket)
        #expect(status.status == 0, "\(status)")
    }
}
