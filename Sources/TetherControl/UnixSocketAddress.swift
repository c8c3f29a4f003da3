import Glibc

/// The `sockaddr_un` of a filesystem Unix socket, shared by the control socket's server and client.
public enum UnixSocketAddress {
    /// The address of `path`, or nil when the path is longer than `sun_path` holds (107 bytes).
    public static func make(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        return address
    }
}
