import Glibc

/// Free TCP ports on the loopback interface for servers started by tests.
package enum LoopbackPort {
    /// A TCP port on 127.0.0.1 that nothing listens on right now: the kernel picks one for a
    /// socket bound to port 0, which is then closed. Another process could take it in between,
    /// which the ephemeral range makes unlikely.
    package static func free() throws -> UInt16 {
        let (fd, port) = try boundSocket()
        close(fd)
        return port
    }

    /// A TCP socket bound to 127.0.0.1 on a port the kernel picks, and the port.
    private static func boundSocket(reuseAddress: Bool = false) throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket(AF_INET): \(String(cString: strerror(errno)))") }
        if reuseAddress {
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            let error = TestSupportError("bind 127.0.0.1:0: \(String(cString: strerror(errno)))")
            close(fd)
            throw error
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A port on 127.0.0.1 that refuses connections until ``RefusingPort/close()``: a socket
    /// bound to it and never listening, so that no other test's server can take the port
    /// meanwhile (one from ``free()`` can be, which once made a test that expected a refused
    /// connection connect to another test's server). Close it with `defer { port.close() }`.
    package static func refusing() throws -> RefusingPort {
        let (fd, port) = try boundSocket()
        return RefusingPort(descriptor: fd, port: port)
    }

    /// A listening TCP socket on 127.0.0.1, on a port the kernel picks (the fake servers').
    package static func listen(backlog: Int32 = 16) throws -> (descriptor: Int32, port: UInt16) {
        let (fd, port) = try boundSocket(reuseAddress: true)
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = TestSupportError("listen: \(String(cString: strerror(errno)))")
            close(fd)
            throw error
        }
        return (fd, port)
    }

    /// Writes all of `bytes` to the socket `fd`; false when the peer is gone.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}

/// A loopback port held bound and not listening (``LoopbackPort/refusing()``).
package final class RefusingPort: Sendable {
    package let port: UInt16
    private let descriptor: Int32

    init(descriptor: Int32, port: UInt16) {
        self.descriptor = descriptor
        self.port = port
    }

    /// `ws://127.0.0.1:PORT/sync`.
    package var syncURL: String { "ws://127.0.0.1:\(port)/sync" }

    /// Frees the port (also on deinit; call it last to keep the port held until then).
    package func close() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    deinit { Glibc.close(descriptor) }
}
