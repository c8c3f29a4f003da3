import Foundation
import Synchronization

/// One host's flood of unfinished request heads, for ``ConnectionFloodTests``: `connections`
/// sockets from `source`, each sending `bytes` of a head that never ends, each reopened as soon
/// as the server closes it, on a thread of its own (its blocking sockets stay off the
/// cooperative pool) until ``stop()``.
final class HostFlood: Sendable {
    let port: Int
    let source: String
    let connections: Int
    let bytes: Int
    private let stopped = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let opened = Atomic<Int>(0)
    /// Connections opened in all (reopenings included).
    var openedCount: Int { opened.load(ordering: .relaxed) }

    init(port: Int, source: String, connections: Int, bytes: Int) {
        self.port = port
        self.source = source
        self.connections = connections
        self.bytes = bytes
    }

    /// A request head of exactly `bytes` bytes without its final blank line.
    var payload: [UInt8] {
        let head = "POST /sync HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 65000\r\nX-Pad: "
        return Array(head.utf8) + [UInt8](repeating: 0x61, count: bytes - head.utf8.count)
    }

    func start() {
        let thread = Thread { [self] in
            let payload = self.payload
            var sockets: [PlainSocket?] = Array(repeating: nil, count: connections)
            while !stopped.load(ordering: .relaxed) {
                for index in sockets.indices where sockets[index]?.isClosedByPeer ?? true {
                    guard !stopped.load(ordering: .relaxed) else { break }
                    sockets[index] = nil
                    guard let socket = try? PlainSocket(port: port, timeout: 2, sourceAddress: source) else { continue }
                    opened.add(1, ordering: .relaxed)
                    socket.send(payload)
                    sockets[index] = socket
                }
                usleep(300_000)
            }
            sockets.removeAll()
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Stops reopening and closes every socket; returns once the thread has.
    func stop() async {
        stopped.store(true, ordering: .relaxed)
        while !finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
