import Dispatch
import Glibc
import Synchronization

/// Plays systemd's side of `sd_notify`: a Unix datagram socket in a test's temporary
/// directory, to be passed to a child as `NOTIFY_SOCKET` (``environment``). Every datagram
/// received is kept in order; tests await them with a deadline instead of sleeping.
///
///     let listener = try NotifySocketListener(directory: temp)
///     let child = try ChildProcess.start(daemon, environment: ChildProcess.inheritedEnvironment(adding: listener.environment))
///     let ready = await listener.next(timeout: .seconds(5))   // "READY=1"
package final class NotifySocketListener: Sendable {
    /// The socket's path.
    package let path: String
    private let received = AwaitableState<[String]>([])
    /// How many messages ``next(timeout:)`` has handed out.
    private let cursor = Mutex(0)
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Binds `notify.sock` (or `name`) in `directory`.
    package init(directory: TemporaryDirectory, name: String = "notify.sock") throws {
        path = directory.appending(name)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket(AF_UNIX): \(String(cString: strerror(errno)))") }
        let bound = UnixAddress.withSockaddr(path: path) { bind(fd, $0, $1) }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw TestSupportError("bind \(path): \(reason)")
        }
        let readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "notify-listener"))
        let received = self.received
        readSource.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }  // EAGAIN: drained
                let message = String(decoding: buffer[0..<count], as: UTF8.self)
                received.update { $0.append(message) }
            }
        }
        readSource.setCancelHandler { close(fd) }
        readSource.resume()
        source = Mutex(readSource)
    }

    deinit { stop() }

    /// `NOTIFY_SOCKET=<path>` for a child's environment.
    package var environment: [String: String] { ["NOTIFY_SOCKET": path] }

    /// Every message received so far, oldest first.
    package var messages: [String] { received.value }

    /// The next message not yet returned by this method, or `nil` when none arrives in time.
    package func next(timeout: Duration = TestDeadline.standard) async -> String? {
        let index = cursor.withLock { $0 }
        guard await received.wait(timeout: timeout, until: { $0.count > index }) else { return nil }
        return cursor.withLock { cursor in
            defer { cursor += 1 }
            return received.read { $0[cursor] }
        }
    }

    /// Waits until a received message satisfies `predicate` and returns it (`nil` on timeout).
    package func first(
        timeout: Duration = TestDeadline.standard, where predicate: @escaping @Sendable (String) -> Bool
    ) async -> String? {
        guard await received.wait(timeout: timeout, until: { $0.contains(where: predicate) }) else { return nil }
        return received.read { $0.first(where: predicate) }
    }

    /// Waits until `count` received messages satisfy `predicate`; `false` on timeout.
    package func waitForCount(
        _ count: Int, timeout: Duration = TestDeadline.standard, where predicate: @escaping @Sendable (String) -> Bool
    ) async -> Bool {
        await received.wait(timeout: timeout) { $0.count(where: predicate) >= count }
    }

    /// How many received messages satisfy `predicate`.
    package func count(where predicate: (String) -> Bool) -> Int {
        received.read { $0.count(where: predicate) }
    }

    /// Returns once every datagram sent to the socket before this call has been received: it
    /// sends a marker datagram (which queues behind them) and waits for it. A child's
    /// notification sent before it printed something is therefore counted once the test saw
    /// that output and flushed.
    package func flush(timeout: Duration = TestDeadline.standard) async throws {
        let marker = "TETHER_TEST_FLUSH=\(UInt64.random(in: 0...UInt64.max))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket(AF_UNIX): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let sent = Array(marker.utf8).withUnsafeBytes { bytes in
            UnixAddress.withSockaddr(path: path) { sendto(fd, bytes.baseAddress, bytes.count, 0, $0, $1) }
        }
        guard sent >= 0 else { throw TestSupportError("send to \(path): \(String(cString: strerror(errno)))") }
        guard await received.wait(timeout: timeout, until: { $0.contains(marker) }) else {
            throw TestSupportError("flush marker not received on \(path) within \(timeout)")
        }
    }

    /// Stops listening and closes the socket.
    package func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }
}
