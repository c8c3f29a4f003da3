import Foundation
import CTetherShims
import Glibc
import TetherControl

/// The listening side of the control socket, on a dedicated thread: it accepts, checks the
/// peer with `SO_PEERCRED` and `SO_PEERGROUPS` (``ControlAccess``: root, the daemon's user, a
/// member of the daemon's group or of the operator group), notes whether it may change, and
/// reads the one-line request with a timeout, so neither a slow nor a refused client ever
/// occupies a Swift concurrency thread. SwiftNIO cannot report peer credentials, hence this.
final class ControlSocketListener: Sendable {
    static let maxRequestBytes = 64 * 1024
    /// How long a client may take to send its request line, or to read its answer.
    static let ioTimeoutSeconds = 5

    let path: String
    private let fd: Int32
    let access: ControlAccess

    /// Creates the socket at `path` (replacing a stale socket, never another kind of file),
    /// mode 0660, group `group` (the daemon's group by default). `operatorGroup`: the gid whose
    /// members may change (nil: none), `operatorGroupName` how it was configured.
    init(
        path: String, group: gid_t = getegid(), operatorGroup: gid_t? = nil,
        operatorGroupName: String = ControlSettings.OperatorGroup.name(ControlSettings.defaultOperatorGroup).description
    ) throws(ControlSocketError) {
        self.path = path
        self.access = ControlAccess(daemonUID: geteuid(), storeGroup: group, operatorGroup: operatorGroup, operatorGroupName: operatorGroupName)
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
            unlink(path)
        }
        guard var address = UnixSocketAddress.make(path) else { throw .pathTooLong(path: path) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(path: path, call: "socket", errno: errno) }
        // The socket file is created with the umask applied; 0660 is set right after bind.
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw .system(path: path, call: "bind", errno: error)
        }
        guard chmod(path, 0o660) == 0, chown(path, uid_t.max, group) == 0 || geteuid() != 0, listen(fd, 64) == 0 else {
            let error = errno
            close(fd)
            unlink(path)
            throw .system(path: path, call: "chmod/listen", errno: error)
        }
        self.fd = fd
    }

    /// Accepts until ``shutdown()``; yields every permitted connection with its request read.
    /// Runs on its own thread.
    func acceptLoop(_ connections: AsyncStream<ControlConnection>.Continuation, onRefused: @Sendable (String) -> Void) {
        defer { connections.finish() }
        while true {
            let client = tether_accept_cloexec(fd)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // shut down (EINVAL) or a fatal error
            }
            var timeout = timeval(tv_sec: Self.ioTimeoutSeconds, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard let peer = ControlPeer.of(socket: client) else {
                close(client)
                continue
            }
            guard access.mayConnect(peer) else {
                onRefused("control socket: refused uid \(peer.uid) (pid \(peer.pid)): not root, the daemon's user or a member of its group or of \(access.operatorGroupName)")
                let connection = ControlConnection(fd: client, request: nil, peer: peer, mayChange: false)
                connection.respond(
                    ControlResponse.failure(
                        "permission denied: uid \(peer.uid) may not use this control socket",
                        exitCode: ControlResponse.permissionDeniedExitCode))
                continue
            }
            connections.yield(
                ControlConnection(fd: client, request: Self.readRequest(client), peer: peer, mayChange: access.mayChange(peer)))
        }
    }

    /// Makes ``acceptLoop`` return; removes the socket file.
    func shutdown() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        unlink(path)
    }

    deinit { close(fd) }

    /// Reads one line (up to `maxRequestBytes`) and decodes it; nil when it is not a request.
    private static func readRequest(_ fd: Int32) -> Result<ControlRequest, ControlRequestError> {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while data.count <= maxRequestBytes {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            if let newline = chunk[0..<n].firstIndex(of: UInt8(ascii: "\n")) {
                data.append(contentsOf: chunk[0..<newline])
                return decode(data)
            }
            data.append(contentsOf: chunk[0..<n])
        }
        if data.count > maxRequestBytes { return .failure(.init(message: "request longer than \(maxRequestBytes) bytes")) }
        return decode(data)
    }

    private static func decode(_ data: [UInt8]) -> Result<ControlRequest, ControlRequestError> {
        guard !data.isEmpty else { return .failure(.init(message: "empty request")) }
        do {
            return .success(try JSONDecoder().decode(ControlRequest.self, from: Data(data)))
        } catch {
            return .failure(.init(message: "not a control request: expected one JSON object with a known \"command\""))
        }
    }
}

/// A request that could not be read or decoded.
struct ControlRequestError: Error, Sendable {
    var message: String
}

/// One accepted, permitted client with its request; answered once, then closed.
struct ControlConnection: Sendable {
    let fd: Int32
    let request: Result<ControlRequest, ControlRequestError>?
    let peer: ControlPeer
    /// Whether the peer may run changing commands (``ControlAccess/mayChange(_:)``).
    let mayChange: Bool

    func respond(_ response: ControlResponse) {
        // A response that cannot be encoded (a non-finite number in a report) is answered as an
        // error: a client is never left without an answer.
        var bytes = (try? JSONEncoder().encode(response)).map { Array($0) } ?? Array(#"{"ok":false,"error":"internal error"}"#.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
        // Closing with unread input would reset the connection and lose the answer: say we are
        // done, then read what the client still sends (bounded, with the socket's timeout).
        Glibc.shutdown(fd, Int32(SHUT_WR))
        var drain = [UInt8](repeating: 0, count: 16 * 1024)
        var drained = 0
        while drained < 4 * 1024 * 1024 {
            let n = read(fd, &drain, drain.count)
            if n <= 0 { break }
            drained += n
        }
        close(fd)
    }
}
