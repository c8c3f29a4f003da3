import Foundation
import Glibc
import Synchronization
import TetherControl

/// Follows the agent's events on a thread of its own (the socket calls block), delivering them
/// into an `AsyncThrowingStream`, and connects again after the last delivered event whenever
/// the agent stops, restarts or is not running yet (docs/control-protocol.md, "Events, and
/// resuming after a restart"). Stops when the stream's consumer goes away.
struct EventFollower: Sendable {
    let client: TetherClient
    let after: UInt64?
    let partition: String?

    /// The first wait before connecting again, doubled up to ``longestWait``.
    static let shortestWait: Duration = .milliseconds(250)
    static let longestWait: Duration = .seconds(5)
    /// How often a quiet connection checks whether its consumer went away.
    static let pollMilliseconds: Int32 = 250

    func start() -> AsyncThrowingStream<AgentEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: AgentEvent.self, throwing: (any Error).self)
        let stopped = StopFlag()
        continuation.onTermination = { _ in stopped.stop() }
        let thread = Thread { run(continuation, stopped) }
        thread.name = "tether-client-events"
        thread.start()
        return stream
    }

    private func run(_ continuation: AsyncThrowingStream<AgentEvent, any Error>.Continuation, _ stopped: StopFlag) {
        var last = after
        var wait = Self.shortestWait
        while !stopped.isStopped {
            do {
                try follow(after: last, stopped) { event in
                    // `dropped` is made for this reader and has no number of its own.
                    if event.seq > 0 { last = event.seq }
                    continuation.yield(event)
                }
                wait = Self.shortestWait  // the agent ended the stream (it stops): connect again
            } catch let error as TetherClientError where error.isTransient {
                // Not running (yet): wait, then try again.
            } catch {
                continuation.finish(throwing: error)
                return
            }
            guard !stopped.wait(wait) else { break }
            wait = min(wait * 2, Self.longestWait)
        }
        continuation.finish()
    }

    /// One connection: the request, its answer, then every event line until the agent closes
    /// the stream or the consumer goes away.
    private func follow(after: UInt64?, _ stopped: StopFlag, _ deliver: (AgentEvent) -> Void) throws(TetherClientError) {
        let fd = try connect()
        defer { close(fd) }
        let request = ControlRequest(command: .events, partition: partition, follow: true, after: after, protocol: ControlProtocol.version)
        try write(request, to: fd)
        var pending: [UInt8] = []
        var answered = false
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let answerDeadline = ContinuousClock.now + client.timeout
        while !stopped.isStopped {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.pollMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                if !answered && ContinuousClock.now > answerDeadline {
                    throw .timedOut("tetherd at \(client.socketPath) did not answer within \(client.timeout)")
                }
                continue
            }
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }  // the agent closed the stream
            pending.append(contentsOf: chunk[0..<n])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[..<newline])
                pending.removeSubrange(...newline)
                if answered {
                    // A kind this release does not know (a newer agent's) is skipped.
                    if let event = try? JSONDecoder().decode(AgentEvent.self, from: line) { deliver(event) }
                    continue
                }
                guard let answer = try? JSONDecoder().decode(ControlResponse.self, from: line) else {
                    throw .unreachable("unreadable answer from tetherd at \(client.socketPath)")
                }
                guard answer.ok else { throw .refusal(answer) }
                answered = true
            }
        }
    }

    private func connect() throws(TetherClientError) -> Int32 {
        let path = client.socketPath
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unreachable("socket: \(String(cString: strerror(errno)))") }
        guard var address = UnixSocketAddress.make(path) else {
            close(fd)
            throw .unreachable("socket path too long: \(path)")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let failure = errno
            close(fd)
            let reason = String(cString: strerror(failure))
            switch failure {
            case ENOENT, ECONNREFUSED: throw .agentNotRunning(socketPath: path, reason: reason)
            case EACCES: throw .permissionDenied("permission denied on \(path): run as a member of the agent's group")
            default: throw .unreachable("cannot connect to \(path): \(reason)")
            }
        }
        return fd
    }

    private func write(_ request: ControlRequest, to fd: Int32) throws(TetherClientError) {
        var line: [UInt8]
        do { line = Array(try JSONEncoder().encode(request)) } catch { throw .unreachable("cannot encode the request: \(error)") }
        line.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < line.count {
            let n = line[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .agentNotRunning(socketPath: client.socketPath, reason: "the connection closed") }
            offset += n
        }
    }
}

/// Set once the stream's consumer went away; the follower's waits end at once.
final class StopFlag: Sendable {
    private let flag = Mutex(false)

    var isStopped: Bool { flag.withLock { $0 } }

    func stop() { flag.withLock { $0 = true } }

    /// Sleeps `duration` in short steps; true when stopped meanwhile.
    func wait(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if isStopped { return true }
            usleep(50_000)
        }
        return isStopped
    }
}
