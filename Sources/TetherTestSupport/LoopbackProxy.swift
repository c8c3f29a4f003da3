import Foundation
import Synchronization

/// A TCP relay on 127.0.0.1 in front of a server, for cutting and stalling a client's traffic
/// in fault tests and counting the bytes on the wire in benchmarks. Clients connect to
/// ``port``; each connection is relayed to the target port.
///
/// - ``Mode/pass``: bytes flow both ways.
/// - ``Mode/drop``: every relayed connection is closed at once and new ones are closed as soon
///   as they are accepted — a cable pulled, a server that went away.
/// - ``Mode/stall``: connections stay open but nothing is relayed in either direction — a
///   black-holed route; only the client's own timeouts notice.
/// - ``Mode/stallUpstream`` / ``Mode/stallDownstream``: one direction only is held (what the
///   client sends, or what the server sends, is not relayed until the mode changes; TCP keeps
///   it, as it would retransmit across a route that loses one direction) — the other
///   direction keeps flowing.
///
/// One plain thread runs a `poll(2)` loop over the listener and every connection (nothing
/// blocks Swift concurrency's threads); mode changes wake it through a pipe.
package final class LoopbackProxy: Sendable {
    package enum Mode: String, Sendable {
        case pass, drop, stall
        case stallUpstream = "stall-upstream", stallDownstream = "stall-downstream"

        /// Whether connections are read at all (every mode but `stall` and `drop`).
        var reads: Bool { self != .stall && self != .drop }
    }

    /// The port clients connect to.
    package let port: UInt16
    private let targetPort: UInt16
    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let state: Mutex<State>

    private struct State {
        var mode: Mode = .pass
        var stopped = false
        var clientToServer = 0
        var serverToClient = 0
        var acceptedConnections = 0
    }

    /// Starts relaying from a free loopback port to `127.0.0.1:targetPort`.
    package init(targetPort: UInt16) throws {
        self.targetPort = targetPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw TestSupportError("proxy bind/listen: \(String(cString: strerror(errno)))")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            close(listener)
            throw TestSupportError("pipe: \(String(cString: strerror(errno)))")
        }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        for fd in [listener, wakeRead, wakeWrite] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        state = Mutex(State())
        let relay = Relay(listener: listener, wakeRead: wakeRead, targetPort: targetPort)
        Thread.detachNewThread { [self] in relay.run(proxy: self) }
    }

    /// What the proxy does with traffic from now on.
    package var mode: Mode {
        get { state.withLock { $0.mode } }
        set {
            state.withLock { $0.mode = newValue }
            wake()
        }
    }

    /// Bytes relayed from clients to the server, and from the server to clients, since the
    /// start or the last ``resetCounters()`` (WebSocket frames and HTTP upgrade included).
    package var clientToServer: Int { state.withLock { $0.clientToServer } }
    package var serverToClient: Int { state.withLock { $0.serverToClient } }

    package func resetCounters() {
        state.withLock {
            $0.clientToServer = 0
            $0.serverToClient = 0
        }
    }
    /// Connections accepted so far.
    package var acceptedConnections: Int { state.withLock { $0.acceptedConnections } }

    /// Closes every connection and the listener; the relay thread ends.
    package func stop() {
        let wasStopped = state.withLock { state in
            defer { state.stopped = true }
            return state.stopped
        }
        if !wasStopped { wake() }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    fileprivate var snapshot: (mode: Mode, stopped: Bool) { state.withLock { ($0.mode, $0.stopped) } }
    fileprivate func count(upstream: Int = 0, downstream: Int = 0, connections: Int = 0) {
        state.withLock {
            $0.clientToServer += upstream
            $0.serverToClient += downstream
            $0.acceptedConnections += connections
        }
    }
    fileprivate func closeControlDescriptors() {
        close(listener)
        close(wakeRead)
        close(wakeWrite)
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// The relay loop, owned by the proxy's thread alone (so its connection table needs no lock).
private final class Relay: @unchecked Sendable {
    private struct Pair {
        var client: Int32
        var server: Int32
    }

    private let listener: Int32
    private let wakeRead: Int32
    private let targetPort: UInt16
    private var pairs: [Pair] = []
    private var buffer = [UInt8](repeating: 0, count: 65536)

    init(listener: Int32, wakeRead: Int32, targetPort: UInt16) {
        self.listener = listener
        self.wakeRead = wakeRead
        self.targetPort = targetPort
    }

    func run(proxy: LoopbackProxy) {
        while true {
            let (mode, stopped) = proxy.snapshot
            if stopped || mode == .drop { closeAll() }
            if stopped { break }
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let polled = mode.reads ? pairs.count : 0
            if mode.reads {
                for pair in pairs {
                    fds.append(pollfd(fd: pair.client, events: mode == .stallUpstream ? 0 : Int16(POLLIN), revents: 0))
                    fds.append(pollfd(fd: pair.server, events: mode == .stallDownstream ? 0 : Int16(POLLIN), revents: 0))
                }
            }
            let ready = poll(&fds, nfds_t(fds.count), 1000)
            if ready < 0 && errno != EINTR { break }
            if ready <= 0 { continue }
            if fds[1].revents != 0 { drainWake() }
            if fds[0].revents & Int16(POLLIN) != 0 { accept(proxy: proxy, mode: mode) }
            guard mode.reads else { continue }
            var finished: Set<Int> = []
            for index in 0..<polled {  // pairs accepted above are polled next time
                let clientEvents = fds[2 + index * 2].revents
                let serverEvents = fds[3 + index * 2].revents
                // A held side is not read; its hang-up or error still ends the connection.
                let ended = Int16(POLLHUP) | Int16(POLLERR)
                if mode == .stallUpstream && clientEvents & ended != 0 || mode == .stallDownstream && serverEvents & ended != 0 {
                    finished.insert(index)
                    continue
                }
                if clientEvents != 0, mode != .stallUpstream,
                    !relay(from: pairs[index].client, to: pairs[index].server, upstream: true, proxy: proxy)
                {
                    finished.insert(index)
                }
                if serverEvents != 0, mode != .stallDownstream,
                    !relay(from: pairs[index].server, to: pairs[index].client, upstream: false, proxy: proxy)
                {
                    finished.insert(index)
                }
            }
            for index in finished.sorted(by: >) {
                close(pairs[index].client)
                close(pairs[index].server)
                pairs.remove(at: index)
            }
        }
        proxy.closeControlDescriptors()
    }

    private func accept(proxy: LoopbackProxy, mode: LoopbackProxy.Mode) {
        let client = Glibc.accept(listener, nil, nil)
        guard client >= 0 else { return }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        proxy.count(connections: 1)
        guard mode != .drop, let server = connectToTarget() else {
            close(client)
            return
        }
        // Small frames go out at once, as without the relay (latency figures go through it).
        var one: Int32 = 1
        for fd in [client, server] { setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        pairs.append(Pair(client: client, server: server))
    }

    private func connectToTarget() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = LoopbackProxy.loopback(port: targetPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Moves what is readable on `source` to `destination`; `false` when the connection ended.
    private func relay(from source: Int32, to destination: Int32, upstream: Bool, proxy: LoopbackProxy) -> Bool {
        let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { return true }
        guard count > 0 else { return false }
        var offset = 0
        while offset < count {
            let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        if upstream { proxy.count(upstream: count) } else { proxy.count(downstream: count) }
        return true
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        _ = read(wakeRead, &bytes, bytes.count)
    }

    private func closeAll() {
        for pair in pairs {
            close(pair.client)
            close(pair.server)
        }
        pairs.removeAll()
    }
}
