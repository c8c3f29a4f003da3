import Glibc

/// Why the control socket could not be created.
package enum ControlSocketError: Error, Sendable, CustomStringConvertible {
    case notASocket(path: String)
    case pathTooLong(path: String)
    case system(path: String, call: String, errno: Int32)

    package var description: String {
        switch self {
        case .notASocket(let path): "control_socket \(path) exists and is not a socket; refusing to replace it"
        case .pathTooLong(let path): "control_socket \(path) is longer than a Unix socket path may be (107 bytes)"
        case .system(let path, let call, let code): "control_socket \(path): \(call) failed: \(String(cString: strerror(code)))"
        }
    }

    package var hint: String {
        "check control_socket in the configuration and that its directory exists and is writable (RuntimeDirectory=tether)"
    }
}
