import Foundation
import Glibc

/// Why `tetherctl` could not talk to the daemon; every case maps to exit status 3 (docs/contract.md: Programs).
public struct ControlClientError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The daemon did not answer within the client's timeout (exit status 1, not 3).
    public var isTimeout = false
    /// Nothing listens on the socket (no such socket, or connection refused): the daemon is
    /// not running. Any other failure leaves that unknown.
    public var nobodyListens = false
    /// The socket's permissions refused the caller (`EACCES`).
    public var permissionDenied = false
}

/// The client side of the control socket: one request line, one response line.
public struct ControlClient: Sendable {
    public var socketPath: String
    /// How long to wait for the answer; nil: as long as the daemon takes.
    public var timeout: Duration?

    public init(socketPath: String, timeout: Duration? = nil) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    /// Sends `request` and waits for the answer (as long as the daemon takes: `wait-synced`
    /// bounds itself by its own timeout).
    public func send(_ request: ControlRequest) throws(ControlClientError) -> ControlResponse {
        let fd = try open(request)
        defer { close(fd) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            try wait(fd, until: deadline)
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            answer.append(contentsOf: chunk[0..<n])
        }
        return try decode(answer)
    }

    /// Sends a streaming request (`events` with `follow`): the first line is the answer, as
    /// ``send(_:)`` returns it (within the timeout); when it is a success, every later line goes
    /// to `line` until the daemon closes the stream or `line` returns false. With `stopping`,
    /// a quiet stream asks it every quarter of a second and ends when it says so (a library's
    /// reader whose consumer went away); without, it waits for the next line as long as it takes.
    public func stream(
        _ request: ControlRequest, stopping: (@Sendable () -> Bool)? = nil, line: (String) -> Bool
    ) throws(ControlClientError) -> ControlResponse {
        let fd = try open(request)
        defer { close(fd) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var header: ControlResponse?
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let header {
                if let stopping, !Self.readable(fd, unless: stopping) { return header }
            } else {
                try wait(fd, until: deadline)
            }
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            pending.append(contentsOf: chunk[0..<n])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let text = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                if let header {
                    if !line(String(decoding: text, as: UTF8.self)) { return header }
                } else {
                    let answer = try decode(text)
                    guard answer.ok else { return answer }
                    header = answer
                }
            }
        }
        if let header { return header }
        return try decode(pending)
    }

    /// Connects and sends `request`; the socket, for the answer.
    private func open(_ request: ControlRequest) throws(ControlClientError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw unreachable("socket: \(String(cString: strerror(errno)))") }
        guard var address = UnixSocketAddress.make(socketPath) else {
            close(fd)
            throw unreachable("socket path too long")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let failure = errno  // before close() may change it
            let reason = switch failure {
            case ENOENT: "no such socket (is tetherd running? is control_socket right?)"
            case ECONNREFUSED: "connection refused (tetherd is not running)"
            case EACCES: "permission denied (run as root, the tether user, or a member of the tether group)"
            default: String(cString: strerror(failure))
            }
            close(fd)
            var error = unreachable(reason)
            error.nobodyListens = failure == ENOENT || failure == ECONNREFUSED
            error.permissionDenied = failure == EACCES
            throw error
        }
        var line: [UInt8]
        do { line = Array(try JSONEncoder().encode(request)) } catch {
            close(fd)
            throw unreachable("cannot encode request: \(error)")
        }
        line.append(UInt8(ascii: "\n"))
        // The daemon may answer and close before reading everything (a refused peer): no
        // SIGPIPE, and its answer is still read.
        var offset = 0
        while offset < line.count {
            let n = line[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
        return fd
    }

    /// Waits until `fd` can be read (true), asking `stopping` every quarter of a second (false
    /// once it says so).
    private static func readable(_ fd: Int32, unless stopping: () -> Bool) -> Bool {
        while !stopping() {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 250) > 0 { return true }
        }
        return false
    }

    /// Waits until `fd` can be read, or throws a timeout at `deadline`.
    private func wait(_ fd: Int32, until deadline: ContinuousClock.Instant?) throws(ControlClientError) {
        guard let deadline else { return }
        while true {
            let left = deadline - ContinuousClock.now
            let (seconds, attoseconds) = left.components
            let milliseconds = left <= .zero ? 0 : Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                throw ControlClientError(
                    description: "tetherd at \(socketPath) did not answer within \(timeout.map { "\($0)" } ?? "")", isTimeout: true)
            }
            return
        }
    }

    private func decode(_ answer: [UInt8]) throws(ControlClientError) -> ControlResponse {
        guard !answer.isEmpty else { throw unreachable("the daemon closed the connection without answering") }
        do {
            return try JSONDecoder().decode(ControlResponse.self, from: Data(answer))
        } catch {
            throw unreachable("unreadable answer from the daemon")
        }
    }

    private func unreachable(_ reason: String) -> ControlClientError {
        ControlClientError(description: "cannot reach tetherd at \(socketPath): \(reason)")
    }
}
