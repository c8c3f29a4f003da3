import Glibc

/// The control socket's reads and writes under a whole-operation deadline: poll(2) with the
/// time that remains, then a non-blocking `recv`/`send`, so a client that sends or reads one
/// byte at a time cannot stretch an operation past its deadline (a per-call timeout such as
/// `SO_RCVTIMEO` restarts with every byte). Called only on the control socket's own threads,
/// never on a Swift concurrency thread.
enum ControlSocketIO {
    enum ReadOutcome: Equatable {
        /// The bytes before the first newline (the newline and anything after it dropped).
        case line([UInt8])
        /// The client closed its side; what it sent, without a newline.
        case ended([UInt8])
        /// More than `limit` bytes came without a newline.
        case tooLong
        /// The deadline passed before a newline.
        case timedOut
        /// The socket failed (reset).
        case failed
    }

    /// Reads one line of at most `limit` bytes before `deadline`.
    static func readLine(_ fd: Int32, limit: Int, deadline: ContinuousClock.Instant) -> ReadOutcome {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            switch wait(fd, for: Int16(POLLIN), until: deadline) {
            case .timedOut: return .timedOut
            case .failed: return .failed
            case .ready: break
            }
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if n < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return .failed
            }
            if n == 0 { return .ended(data) }
            if let newline = chunk[0..<n].firstIndex(of: UInt8(ascii: "\n")) {
                data.append(contentsOf: chunk[0..<newline])
                return data.count > limit ? .tooLong : .line(data)
            }
            data.append(contentsOf: chunk[0..<n])
            if data.count > limit { return .tooLong }
        }
    }

    /// Writes every byte before `deadline`; false when the client stopped reading for that
    /// long, closed, or the socket failed.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], deadline: ContinuousClock.Instant) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            guard n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) else { return false }
            guard case .ready = wait(fd, for: Int16(POLLOUT), until: deadline) else { return false }
        }
        return true
    }

    /// Reads and drops what the client still sends until it closes, `limit` bytes, or
    /// `deadline`: closing with unread input would reset the connection and could lose the
    /// answer just written.
    static func drain(_ fd: Int32, limit: Int, deadline: ContinuousClock.Instant) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var drained = 0
        while drained < limit {
            guard case .ready = wait(fd, for: Int16(POLLIN), until: deadline) else { return }
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            if n <= 0 { return }
            drained += n
        }
    }

    /// Drops what is queued now, without waiting.
    static func discardQueued(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var discarded = 0
        while discarded < 1 << 20 {
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            discarded += n
        }
    }

    enum Readiness { case ready, timedOut, failed }

    /// Waits until `fd` is ready for `events` (or hung up, which the next call reports), at
    /// most until `deadline`.
    static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant) -> Readiness {
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { return .timedOut }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed
            }
            if ready > 0 { return descriptor.revents & Int16(POLLNVAL) != 0 ? .failed : .ready }
        }
    }
}
