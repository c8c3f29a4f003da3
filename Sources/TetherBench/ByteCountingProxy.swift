import Foundation
import Glibc
import Synchronization
import TetherTestSupport

/// A TCP proxy on loopback that forwards every connection to `127.0.0.1:target` and counts the
/// bytes in each direction (WebSocket frames and HTTP upgrade included: what is on the wire).
/// Plain threads block in `accept`/`read`; never cooperative ones.
public final class ByteCountingProxy: Sendable {
    public let port: UInt16
    private let target: UInt16
    private let listener: Int32
    private let upstream = Atomic<Int>(0)
    private let downstream = Atomic<Int>(0)

    /// Bytes from clients to the server, and from the server to clients, since the last reset.
    public var clientToServer: Int { upstream.load(ordering: .relaxed) }
    public var serverToClient: Int { downstream.load(ordering: .relaxed) }

    public func resetCounters() {
        upstream.store(0, ordering: .relaxed)
        downstream.store(0, ordering: .relaxed)
    }

    public init(target: UInt16) throws {
        self.target = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("proxy socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw TestSupportError("proxy bind/listen: \(String(cString: strerror(errno)))")
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops accepting (connections already open run until either side closes).
    public func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            // Not inherited by the agents and sqlite3 processes the benchmark starts.
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard server >= 0, connected == 0 else {
                close(client)
                if server >= 0 { close(server) }
                continue
            }
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(server, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            Thread.detachNewThread { [self] in pump(from: client, to: server, upstream: true) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, upstream: false) }
        }
    }

    /// Copies until end of file or an error, then shuts down both sockets (the other pump ends
    /// too) and closes its source.
    private func pump(from source: Int32, to destination: Int32, upstream isUpstream: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            if isUpstream { upstream.add(count, ordering: .relaxed) } else { downstream.add(count, ordering: .relaxed) }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + sent, count - sent) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { break loop }
                sent += written
            }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
        close(source)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
