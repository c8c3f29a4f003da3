import Foundation
import Glibc
import Synchronization
import TetherControl

/// The control connections following the event log (`tetherctl events` without
/// `--no-follow`), each on a thread of its own: the socket writes block, and a reader that
/// stops reading must hold up nobody but itself (the log keeps a bounded queue per reader).
final class EventFollowers: Sendable {
    /// Readers following at once; more are refused with a reason.
    static let limit = 16
    /// A follower's socket send buffer: with the log's queue, what a stalled reader may hold.
    static let sendBufferBytes: Int32 = 64 * 1024

    private let state = Mutex((connections: Set<Int32>(), closed: false))

    /// Streams to `connection`: the header line, the kept events, then each new one, until the
    /// client closes, the log closes or ``closeAll()``. False when refused (answered already).
    @discardableResult
    func start(_ connection: ControlConnection, header: ControlResponse, log: EventLog, partition: String?, after: UInt64?) -> Bool {
        let refusal = state.withLock { state -> String? in
            if state.closed { return "tetherd is stopping" }
            guard state.connections.count < Self.limit else {
                return "too many readers follow the events already (\(Self.limit)); try again later or use --no-follow"
            }
            state.connections.insert(connection.fd)
            return nil
        }
        if let refusal {
            connection.respond(.failure(refusal, code: .unavailable))
            return false
        }
        let (backlog, subscription) = log.follow(partition: partition, after: after)
        let thread = Thread { [self] in
            defer {
                subscription?.cancel()
                // Removed and closed under the lock: closeAll never shuts down a descriptor
                // number the system has given to something else since.
                state.withLock { state in
                    state.connections.remove(connection.fd)
                    close(connection.fd)
                }
            }
            var size = Self.sendBufferBytes
            setsockopt(connection.fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            // A header of strings and numbers always encodes; the fallback is its minimal form.
            let headerLine = (try? JSONEncoder().encode(header)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"ok":true}"#
            guard write(headerLine, to: connection.fd) else { return }
            for event in backlog {
                guard write(event.jsonLine, to: connection.fd) else { return }
            }
            guard let subscription else { return }
            while true {
                switch subscription.next(until: Date(timeIntervalSinceNow: 1)) {
                case .event(let event):
                    guard write(event.jsonLine, to: connection.fd) else { return }
                case .timedOut:
                    if Self.peerHungUp(connection.fd) { return }
                case .ended:
                    return
                }
            }
        }
        thread.name = "tether-events"
        thread.start()
        return true
    }

    /// Ends every follower (the daemon is stopping); a blocked write returns at once.
    func closeAll() {
        state.withLock { state in
            state.closed = true
            for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    /// Writes one line; false when the reader is gone or the daemon stops. A reader that is
    /// only slow keeps its place: the write is tried again after each send timeout.
    private func write(_ line: String, to fd: Int32) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !isClosed && !Self.peerHungUp(fd) { continue }
            return false
        }
        return true
    }

    /// Linux's POLLRDHUP (the peer shut down its writing side); Glibc's module does not export it.
    private static let pollReadHangUp: Int16 = 0x2000

    /// Whether the client closed its end (it sends nothing after its request).
    static func peerHungUp(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN) | pollReadHangUp, revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        if descriptor.revents & (pollReadHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0 { return true }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
    }
}
