import Glibc

/// Free TCP ports on the loopback interface for servers started by tests.
package enum LoopbackPort {
    /// A TCP port on 127.0.0.1 that nothing listens on right now: the kernel picks one for a
    /// socket bound to port 0, which is then closed. Another process could take it in between,
    /// which the ephemeral range makes unlikely.
    package static func free() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket(AF_INET): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestSupportError("bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestSupportError("getsockname: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }
}
