import Foundation
import Synchronization

/// A TCP listener on 127.0.0.1 (a port the kernel picks) whose every connection is served by
/// a handler on a plain thread of its own (never Swift concurrency's): the fake servers'
/// sockets (``FakeSyncServer``, ``FakeEnrollmentServer``). ``stop()`` closes the listener
/// and shuts down the connections still open; a connection is closed when its handler returns.
package final class LoopbackListener: Sendable {
    package let port: UInt16
    private let descriptor: Int32
    private let state = Mutex(State())

    private struct State {
        var connections = 0
        var stopped = false
        var clients: [Int32] = []
    }

    /// How many connections were accepted.
    package var connections: Int { state.withLock { $0.connections } }

    /// Listens and serves each connection with `serve` (the client's socket).
    package init(serve: @escaping @Sendable (Int32) -> Void) throws {
        (descriptor, port) = try LoopbackPort.listen()
        let listener = self
        Thread.detachNewThread { listener.acceptLoop(serve) }
    }

    package func stop() {
        let clients = state.withLock { state -> [Int32] in
            guard !state.stopped else { return [] }
            state.stopped = true
            return state.clients
        }
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        for client in clients { shutdown(client, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop(_ serve: @escaping @Sendable (Int32) -> Void) {
        while true {
            let client = accept(descriptor, nil, nil)
            if client < 0 { return }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let stopped = state.withLock { state -> Bool in
                if !state.stopped {
                    state.connections += 1
                    state.clients.append(client)
                }
                return state.stopped
            }
            if stopped {
                close(client)
                return
            }
            Thread.detachNewThread {
                defer {
                    self.state.withLock { $0.clients.removeAll { $0 == client } }
                    close(client)
                }
                var timeout = timeval(tv_sec: 30, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                serve(client)
            }
        }
    }
}
